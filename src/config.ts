import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** Where Postgres and Redis are looked for when DATABASE_URL / REDIS_URL are not set. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/payments';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** The git-ignored folder of the project where the embedded services keep their files (LOCAL_DATA_DIR). */
const DEFAULT_LOCAL_DATA_DIR = fileURLToPath(new URL('../.data', import.meta.url));

const bool = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

/** An optional key; set but empty counts as unset (an empty line in an env file). */
const stripeKey = (shape: RegExp, message: string) =>
  z.preprocess((v) => (v === '' ? undefined : v), z.string().regex(shape, message).optional());

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
function isTrustProxy(v: string): boolean {
  if (/^(true|false|\d+)?$/.test(v.trim())) return true;
  return v.split(',').every((part) => {
    const [ip, bits, ...rest] = part.trim().split('/');
    if (PROXY_NAMES.has(ip!) && bits === undefined) return true;
    const family = isIP(ip!);
    if (!family || rest.length) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  });
}

/** Express's `trust proxy` value for TRUST_PROXY. */
function trustProxy(v: string): boolean | number | string {
  const t = v.trim();
  if (t === '' || t === 'false') return false;
  if (t === 'true') return true;
  return /^\d+$/.test(t) ? Number(t) : t;
}

const EnvSchema = z.object({
  /** Unset: the local service when it answers, else (outside production) an embedded one (src/ops/local-services.ts). */
  DATABASE_URL: z.url().optional(),
  REDIS_URL: z.url().optional(),
  /** `production` never embeds a database or a Redis: a missing one is a start-up error. */
  NODE_ENV: z.string().default('development'),
  /** Where the embedded PostgreSQL keeps its data and the embedded redis-server its files (default: .data in the project). */
  LOCAL_DATA_DIR: z.string().min(1).optional(),
  /** Namespace for every Redis key (BullMQ prefix); lets several deployments or test files share one Redis. */
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('payments'),
  PORT: int(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  CHECKOUT_URL: z.url().optional(),
  PUBLIC_LINK_URL: z.url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Per process. 10 (postgres.js's own default): on a 2-core box 20 busy backends starved the web process (bench/RESULTS.md). */
  DB_POOL_MAX: int(10, 1),
  /** Web processes forked by node:cluster, sharing PORT; each has its own pool of DB_POOL_MAX connections. */
  WEB_CONCURRENCY: int(1, 1),
  /** Server-side bounds on every pooled connection, so that no bug can hold a row lock for ever (docs/operations.md). */
  DB_STATEMENT_TIMEOUT_MS: int(30_000),
  DB_LOCK_TIMEOUT_MS: int(10_000),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: int(30_000),
  /** How long a process remembers what a key resolved to: a revoked key is refused everywhere within this (issue 14). */
  API_KEY_CACHE_SECONDS: int(2),
  SHUTDOWN_TIMEOUT_MS: int(15_000),
  RECONCILE_INTERVAL_MS: int(60_000, 1000),
  /** How long a worker's job lock lasts; a job whose worker died runs again once it expires. */
  WORKER_LOCK_MS: int(30_000, 500),
  CHECKOUT_MIN_EXPIRY_SECONDS: int(1800, 1),
  WEBHOOK_BACKOFF_BASE_MS: int(600_000, 1),
  WEBHOOK_TIMEOUT_MS: int(10_000, 100),
  WEBHOOK_ALLOW_INSECURE_TARGETS: bool,
  /**
   * Test-mode webhook endpoints may be local: http, localhost, loopback and private addresses
   * (docs/decisions.md, "Local test-mode endpoints"). Unset: on unless NODE_ENV is production.
   * Live-mode endpoints never may, whatever this says.
   */
  WEBHOOK_TEST_LOCAL_TARGETS: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['true', 'false', '1', '0']).optional()),
  ADMIN_USER: z.string().min(1).optional(),
  ADMIN_PASSWORD: z.string().min(1).optional(),
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (rate limits of the hosted
   * pages): unset or false (none: the socket's address), a hop count, or a comma list of
   * addresses, CIDR ranges and loopback/linklocal/uniquelocal. `true` believes any sender.
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .refine(isTrustProxy, 'must be false, true, a hop count, or a comma list of addresses, CIDR ranges, loopback, linklocal, uniquelocal'),
  /** Card-testing limits per client address, per hour (docs/operations.md, card-testing); 0 turns one off. */
  RATE_LIMIT_LINK_SESSIONS_PER_HOUR: int(30),
  RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR: int(30),
  RATE_LIMIT_PAY_PER_SESSION_PER_HOUR: int(10),
  /** Live mode's Stripe account (docs/decisions.md, "Stripe processor"): all three or none; none turns live payments off. */
  STRIPE_SECRET_KEY: stripeKey(/^(sk|rk)_live_/, 'must be a live secret key (sk_live_… or rk_live_…)'),
  STRIPE_PUBLISHABLE_KEY: stripeKey(/^pk_live_/, 'must be a live publishable key (pk_live_…)'),
  STRIPE_WEBHOOK_SECRET: stripeKey(/^whsec_/, 'must be a webhook signing secret (whsec_…)'),
  /** Test mode against Stripe's test mode instead of the simulator: all three or none. */
  STRIPE_TEST_SECRET_KEY: stripeKey(/^(sk|rk)_test_/, 'must be a test secret key (sk_test_… or rk_test_…)'),
  STRIPE_TEST_PUBLISHABLE_KEY: stripeKey(/^pk_test_/, 'must be a test publishable key (pk_test_…)'),
  STRIPE_TEST_WEBHOOK_SECRET: stripeKey(/^whsec_/, 'must be a webhook signing secret (whsec_…)'),
  /** Where stripe-node sends its calls (tests and proxies point it elsewhere) and where the hosted page loads Stripe.js from. */
  STRIPE_API_URL: z.url().default('https://api.stripe.com'),
  STRIPE_JS_URL: z.url().default('https://js.stripe.com/v3/'),
  /** Where the hosted invoice pages live (default PUBLIC_BASE_URL/invoices). */
  INVOICE_URL: z.url().optional(),
  /**
   * The mail server (docs/decisions.md, "Email"): smtp://user:pass@host:587 or smtps://…:465. Unset:
   * emails are kept in Postgres and printed to the log, readable at GET /v1/emails, never sent.
   */
  SMTP_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().refine((u) => /^smtps?:\/\//.test(u), 'must be an smtp:// or smtps:// URL').optional()),
  /** The address emails come from; the merchant's business name is the sender name. */
  EMAIL_FROM: z.email().default('receipts@localhost'),
  /** Attempts for one email before it is FAILED (exponential backoff from EMAIL_BACKOFF_BASE_MS). */
  EMAIL_MAX_ATTEMPTS: int(8, 1),
  EMAIL_BACKOFF_BASE_MS: int(30_000, 1),
  /** Reminders of an OPEN invoice past its due_date: one every interval, at most LIMIT of them (0: none). */
  INVOICE_REMINDER_INTERVAL_MS: int(3 * 24 * 3600 * 1000, 1000),
  INVOICE_REMINDER_LIMIT: int(3),
  /**
   * Test mode only (docs/decisions.md, "Installments"): the time between two parts of a new test-mode
   * installment plan, in seconds, instead of a week or a month; and the step of its dunning schedule
   * (retries 1, 3 and 5 steps after the first failure), in seconds instead of days. Unset: the real
   * calendar. Live plans always get the real calendar, whatever these say.
   */
  INSTALLMENT_TEST_INTERVAL_SECONDS: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).optional()),
  INSTALLMENT_TEST_RETRY_SECONDS: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).optional()),
  /** Dashboard sessions (src/dashboard): end after this long unused, and this long after sign-in whatever happens. */
  DASHBOARD_SESSION_IDLE_MINUTES: int(12 * 60, 1),
  DASHBOARD_SESSION_MAX_HOURS: int(7 * 24, 1),
  /** Dashboard sign-in attempts per hour, per client address and per email; 0 turns one off. */
  DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: int(30),
  DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: int(10),
  /** How long a one-time set-password link of the dashboard works. */
  DASHBOARD_PASSWORD_LINK_HOURS: int(24, 1),
  /** Customer portal sessions (src/portal): end after this long unused, and this long after sign-in whatever happens. */
  PORTAL_SESSION_IDLE_MINUTES: int(30, 1),
  PORTAL_SESSION_MAX_HOURS: int(8, 1),
  /** Portal sign-in link requests per hour, per client address and per email; 0 turns one off. */
  PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: int(20),
  PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: int(5),
});

export type Config = ReturnType<typeof loadConfig>;

/** One Stripe account's keys for one mode. */
export interface StripeKeys {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
}

/** The three keys of a mode, all or none: a partial set is a start-up error naming what is missing. */
function stripeKeys(mode: string, names: [string, string, string], values: [string | undefined, string | undefined, string | undefined]): StripeKeys | null {
  const given = values.filter((v) => v !== undefined && v !== '');
  if (given.length === 0) return null;
  if (given.length < 3) {
    const missing = names.filter((_, i) => !values[i]);
    throw new Error(`invalid configuration: ${missing.join(', ')}: ${mode} Stripe keys come together (secret, publishable, webhook secret); set all three or none`);
  }
  return { secretKey: values[0]!, publishableKey: values[1]!, webhookSecret: values[2]! };
}

const trimSlash = (u: string) => u.replace(/\/+$/, '');

/** Parses the environment once. The only place in the code base that reads env variables. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid configuration: ${issue.path.join('.')}: ${issue.message}`);
  }
  const e = parsed.data;
  const stripe = {
    live: stripeKeys('live', ['STRIPE_SECRET_KEY', 'STRIPE_PUBLISHABLE_KEY', 'STRIPE_WEBHOOK_SECRET'], [e.STRIPE_SECRET_KEY, e.STRIPE_PUBLISHABLE_KEY, e.STRIPE_WEBHOOK_SECRET]),
    test: stripeKeys('test', ['STRIPE_TEST_SECRET_KEY', 'STRIPE_TEST_PUBLISHABLE_KEY', 'STRIPE_TEST_WEBHOOK_SECRET'], [e.STRIPE_TEST_SECRET_KEY, e.STRIPE_TEST_PUBLISHABLE_KEY, e.STRIPE_TEST_WEBHOOK_SECRET]),
    apiUrl: trimSlash(e.STRIPE_API_URL),
    jsUrl: e.STRIPE_JS_URL,
  };
  const publicBaseUrl = trimSlash(e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`);
  return {
    databaseUrl: e.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    redisUrl: e.REDIS_URL ?? DEFAULT_REDIS_URL,
    /** What src/ops/local-services.ts needs to decide whether to embed Postgres or Redis. */
    localServices: {
      databaseUrlSet: e.DATABASE_URL !== undefined,
      redisUrlSet: e.REDIS_URL !== undefined,
      embed: e.NODE_ENV !== 'production',
      dataDir: resolve(e.LOCAL_DATA_DIR ?? DEFAULT_LOCAL_DATA_DIR),
    },
    redisPrefix: e.REDIS_PREFIX,
    port: e.PORT,
    publicBaseUrl,
    checkoutUrl: trimSlash(e.CHECKOUT_URL ?? `${publicBaseUrl}/checkout`),
    publicLinkUrl: trimSlash(e.PUBLIC_LINK_URL ?? `${publicBaseUrl}/l`),
    invoiceUrl: trimSlash(e.INVOICE_URL ?? `${publicBaseUrl}/invoices`),
    email: {
      smtpUrl: e.SMTP_URL ?? null,
      from: e.EMAIL_FROM,
      maxAttempts: e.EMAIL_MAX_ATTEMPTS,
      backoffBaseMs: e.EMAIL_BACKOFF_BASE_MS,
      /** Without SMTP_URL, whether the log may show one-time sign-in links (a local service: how a developer reads them); never in production. */
      logLinks: e.NODE_ENV !== 'production',
    },
    invoiceReminders: { intervalMs: e.INVOICE_REMINDER_INTERVAL_MS, limit: e.INVOICE_REMINDER_LIMIT },
    /** Test mode's shortened installment calendar (never applied to live plans). */
    installmentsTest: {
      intervalSeconds: e.INSTALLMENT_TEST_INTERVAL_SECONDS ?? null,
      retrySeconds: e.INSTALLMENT_TEST_RETRY_SECONDS ?? null,
    },
    logLevel: e.LOG_LEVEL,
    dbPoolMax: e.DB_POOL_MAX,
    dbTimeouts: {
      statementMs: e.DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.DB_LOCK_TIMEOUT_MS,
      idleInTransactionMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    webConcurrency: e.WEB_CONCURRENCY,
    apiKeyCacheMs: e.API_KEY_CACHE_SECONDS * 1000,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    workerLockMs: e.WORKER_LOCK_MS,
    checkoutMinExpirySeconds: e.CHECKOUT_MIN_EXPIRY_SECONDS,
    webhookBackoffBaseMs: e.WEBHOOK_BACKOFF_BASE_MS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowInsecureTargets: e.WEBHOOK_ALLOW_INSECURE_TARGETS,
    webhookTestLocalTargets:
      e.WEBHOOK_TEST_LOCAL_TARGETS === undefined ? e.NODE_ENV !== 'production' : e.WEBHOOK_TEST_LOCAL_TARGETS === 'true' || e.WEBHOOK_TEST_LOCAL_TARGETS === '1',
    admin: e.ADMIN_USER && e.ADMIN_PASSWORD ? { user: e.ADMIN_USER, password: e.ADMIN_PASSWORD } : null,
    trustProxy: trustProxy(e.TRUST_PROXY),
    rateLimits: {
      linkSessionsPerHour: e.RATE_LIMIT_LINK_SESSIONS_PER_HOUR,
      payPerClientPerHour: e.RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR,
      payPerSessionPerHour: e.RATE_LIMIT_PAY_PER_SESSION_PER_HOUR,
    },
    stripe,
    dashboard: {
      sessionIdleSeconds: e.DASHBOARD_SESSION_IDLE_MINUTES * 60,
      sessionMaxSeconds: e.DASHBOARD_SESSION_MAX_HOURS * 3600,
      signInPerClientPerHour: e.DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR,
      signInPerEmailPerHour: e.DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR,
      passwordLinkSeconds: e.DASHBOARD_PASSWORD_LINK_HOURS * 3600,
    },
    portal: {
      sessionIdleSeconds: e.PORTAL_SESSION_IDLE_MINUTES * 60,
      sessionMaxSeconds: e.PORTAL_SESSION_MAX_HOURS * 3600,
      signInPerClientPerHour: e.PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR,
      signInPerEmailPerHour: e.PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR,
    },
  };
}
