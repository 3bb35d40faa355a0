import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { isLoopbackUrl } from './lib/loopback.ts';
import { serviceAddress } from './lib/service-address.ts';
import { isTrustProxy, trustProxy } from './lib/trust-proxy.ts';
import type { RedisClusterTarget } from './queue/redis.ts';

/** Where Postgres and Redis are looked for when DATABASE_URL / REDIS_URL are not set. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/payments';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** Stripe's own addresses, and the sender address of a service not configured for email. */
const DEFAULT_STRIPE_API_URL = 'https://api.stripe.com';
const DEFAULT_STRIPE_JS_URL = 'https://js.stripe.com/v3/';
const DEFAULT_EMAIL_FROM = 'receipts@localhost';
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

const EnvSchema = z.object({
  /** Unset: the local service when it answers, else (outside production) an embedded one (src/ops/local-services.ts). */
  DATABASE_URL: z.url().optional(),
  REDIS_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  /**
   * A Redis Cluster instead of REDIS_URL (docs/operations.md, "Redis Cluster"): a comma list of some
   * of its nodes, `host:port` or `redis://[user:password@]host:port` (`rediss://` for TLS); the
   * credentials and TLS of the first entry apply to every node. Each queue then gets a hash tag.
   */
  REDIS_CLUSTER_NODES: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** `production` never embeds a database or a Redis: a missing one is a start-up error. */
  NODE_ENV: z.string().default('development'),
  /** Where the embedded PostgreSQL keeps its data and the embedded redis-server its files (default: .data in the project). */
  LOCAL_DATA_DIR: z.string().min(1).optional(),
  /**
   * Namespace for every Redis key (BullMQ prefix); lets several deployments or test files share one
   * Redis. No braces: on a Redis Cluster the service adds each queue's hash tag itself (queues.ts).
   */
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('payments'),
  PORT: int(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  /** For the commands (listen, users:create): the service's address from this machine (src/lib/service-address.ts). */
  PAYMENTS_API_BASE: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  CHECKOUT_URL: z.url().optional(),
  PUBLIC_LINK_URL: z.url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Log lines go to stdout in blocks of up to 32 KB, at the latest every LOG_FLUSH_MS and at exit (src/lib/logger.ts); 0: each at once. */
  LOG_FLUSH_MS: int(100),
  /** Per process. 10 (postgres.js's own default): on a 2-core box 20 busy backends starved the web process (bench/RESULTS.md). */
  DB_POOL_MAX: int(10, 1),
  /** Web processes forked by node:cluster, sharing PORT; each has its own pool of DB_POOL_MAX connections. */
  WEB_CONCURRENCY: int(1, 1),
  /** Server-side bounds on every pooled connection, so that no bug can hold a row lock for ever (docs/operations.md). */
  DB_STATEMENT_TIMEOUT_MS: int(30_000),
  DB_LOCK_TIMEOUT_MS: int(10_000),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: int(30_000),
  /**
   * DATABASE_URL is PgBouncer (or another pooler) in transaction mode (docs/operations.md,
   * "PgBouncer"): no start-up parameters, the bounds set in each transaction and as the role's
   * defaults by `npm run migrate`, and prepared statements off unless DATABASE_PREPARE says otherwise.
   */
  DATABASE_TRANSACTION_POOLING: bool,
  /** Named prepared statements; unset: on, but off with DATABASE_TRANSACTION_POOLING (PgBouncer 1.18 cannot carry them). */
  DATABASE_PREPARE: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['true', 'false', '1', '0']).optional()),
  /** How long a process remembers what a key resolved to: a revoked key is refused everywhere within this (issue 14). */
  API_KEY_CACHE_SECONDS: int(2),
  SHUTDOWN_TIMEOUT_MS: int(15_000),
  RECONCILE_INTERVAL_MS: int(60_000, 1000),
  /** How long a payment held by a fraud rule's `review` waits for a person before it is refused (docs/fraud.md). */
  FRAUD_REVIEW_HOURS: int(72, 1),
  /**
   * How long one repair pass may run before its round stops waiting for it (docs/operations.md,
   * "Repair passes"): the next pass starts, and this process skips the late one until it ends.
   */
  REPAIR_PASS_TIMEOUT_MS: int(30_000, 100),
  /**
   * GET /metrics (docs/operations.md, "Metrics and alerts"), off by default. METRICS_PORT: a port of
   * its own, in every process (web, worker, both); METRICS_HOST the address it binds (default: every
   * interface, as PORT). METRICS_TOKEN: a bearer token the scraper must send; alone, /metrics is
   * served on PORT behind it.
   */
  METRICS_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(65_535).optional()),
  METRICS_HOST: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  METRICS_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16, 'must be at least 16 characters').optional()),
  /** How long a worker's job lock lasts; a job whose worker died runs again once it expires. */
  WORKER_LOCK_MS: int(30_000, 500),
  CHECKOUT_MIN_EXPIRY_SECONDS: int(1800, 1),
  WEBHOOK_BACKOFF_BASE_MS: int(600_000, 1),
  WEBHOOK_TIMEOUT_MS: int(10_000, 100),
  WEBHOOK_ALLOW_INSECURE_TARGETS: bool,
  /**
   * Automatic disabling (issue 26, docs/operations.md "Endpoint health"): an endpoint whose attempts
   * have all failed for this long, with at least WEBHOOK_DISABLE_MIN_FAILURES failed attempts over
   * it, is disabled. The warning email goes a fifth of the window (at most a day) before. Tests shorten both.
   */
  WEBHOOK_DISABLE_AFTER_MS: int(5 * 24 * 3600 * 1000, 1000),
  WEBHOOK_DISABLE_MIN_FAILURES: int(10, 1),
  /**
   * Test-mode webhook endpoints may be local: http, localhost, loopback and private addresses
   * (docs/decisions.md, "Local test-mode endpoints"). Unset: on only where the service is clearly
   * on a developer's machine (PUBLIC_BASE_URL's host is loopback, or it runs on the embedded
   * services: `localSetup`), whatever NODE_ENV says (issue 21). Live-mode endpoints never may.
   */
  WEBHOOK_TEST_LOCAL_TARGETS: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['true', 'false', '1', '0']).optional()),
  /** Set by `npm start` for the web processes it forks when it runs on the embedded services (src/runtime.ts); not for people. */
  EMBEDDED_SERVICES: bool,
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
  STRIPE_API_URL: z.url().default(DEFAULT_STRIPE_API_URL),
  STRIPE_JS_URL: z.url().default(DEFAULT_STRIPE_JS_URL),
  /** Where the hosted invoice pages live (default PUBLIC_BASE_URL/invoices). */
  INVOICE_URL: z.url().optional(),
  /**
   * The mail server (docs/decisions.md, "Email"): smtp://user:pass@host:587 or smtps://…:465. Unset:
   * emails are kept in Postgres and printed to the log, readable at GET /v1/emails, never sent.
   */
  SMTP_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().refine((u) => /^smtps?:\/\//.test(u), 'must be an smtp:// or smtps:// URL').optional()),
  /** The address emails come from; the merchant's business name is the sender name. */
  EMAIL_FROM: z.email().default(DEFAULT_EMAIL_FROM),
  /** Attempts for one email before it is FAILED (exponential backoff from EMAIL_BACKOFF_BASE_MS). */
  EMAIL_MAX_ATTEMPTS: int(8, 1),
  EMAIL_BACKOFF_BASE_MS: int(30_000, 1),
  /** Reminders of an OPEN invoice past its due_date: one every interval, at most LIMIT of them (0: none). */
  INVOICE_REMINDER_INTERVAL_MS: int(3 * 24 * 3600 * 1000, 1000),
  INVOICE_REMINDER_LIMIT: int(3),
  /** Export runs (docs/exports.md): a download link's lifetime, a run's (and its file's) life, the GET stream's row bound. */
  EXPORT_LINK_TTL_SECONDS: int(3600, 1),
  EXPORT_RETENTION_DAYS: int(7, 1),
  EXPORT_STREAM_MAX_ROWS: int(100_000, 1),
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
  /**
   * Dashboard sign-in limits per hour (src/dashboard/throttle.ts); 0 turns one off: attempts per
   * client address (refused past it); wrong passwords per email from one client address (that
   * client refused for that email); wrong passwords per email from all addresses (past it every
   * attempt for the email waits, 1 s doubling up to 10 s: slowed, never refused).
   */
  DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: int(30),
  DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: int(10),
  DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR: int(20),
  /** How long a one-time set-password link of the dashboard works. */
  DASHBOARD_PASSWORD_LINK_HOURS: int(24, 1),
  /** Customer portal sessions (src/portal): end after this long unused, and this long after sign-in whatever happens. */
  PORTAL_SESSION_IDLE_MINUTES: int(30, 1),
  PORTAL_SESSION_MAX_HOURS: int(8, 1),
  /** Portal sign-in links per hour: requests per client address (refused past it), emails sent per address (past it: the same answer, nothing sent); 0 turns one off. */
  PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: int(20),
  PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: int(5),
  /**
   * How long the tables that grow with traffic keep their rows, in days (docs/decisions.md, "Bounded
   * tables"): whole partitions are dropped past it. Events 30 days (Stripe's events API); webhook
   * deliveries and their attempts at least as long as their events (unset: the same); emails 180
   * days (a card dispute can come 120 days after the payment); Stripe's events seen, 30 days (Stripe
   * sends copies of an event for 3 days and can resend it while it keeps it, 30 days).
   */
  RETENTION_EVENTS_DAYS: int(30, 1),
  RETENTION_WEBHOOK_DELIVERIES_DAYS: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).optional()),
  RETENTION_EMAILS_DAYS: int(180, 1),
  RETENTION_PROCESSOR_EVENTS_DAYS: int(30, 4),
  /** Partitions are made this far ahead (hourly and at every start), so inserts find one even when the job has not run for days. */
  RETENTION_PARTITIONS_AHEAD_DAYS: z.coerce.number().int().min(2).max(90).default(14),
});

export type Config = ReturnType<typeof loadConfig>;

/**
 * REDIS_CLUSTER_NODES read, or the sentence saying what is wrong with it. The sentence names an
 * entry by its place, never by its text: an entry may carry a password.
 */
export function parseClusterNodes(value: string): RedisClusterTarget | string {
  const entries = value.split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.length === 0) return 'must name at least one node (host:port)';
  const nodes: RedisClusterTarget['nodes'] = [];
  let login: Omit<RedisClusterTarget, 'nodes'> | undefined;
  for (const [i, entry] of entries.entries()) {
    const which = `entry ${i + 1}`;
    let u: URL;
    try {
      u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `redis://${entry}`);
    } catch {
      return `${which} is not host:port or a redis:// URL`;
    }
    if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return `${which}: only redis:// and rediss:// are understood`;
    if (!u.hostname || !u.port || (u.pathname !== '' && u.pathname !== '/')) return `${which} must be host:port, with a port and no database number (a cluster has only database 0)`;
    nodes.push({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) });
    login ??= {
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      tls: u.protocol === 'rediss:',
    };
  }
  return { nodes, ...login! };
}

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
  let redisCluster: RedisClusterTarget | null = null;
  if (e.REDIS_CLUSTER_NODES !== undefined) {
    if (e.REDIS_URL !== undefined) throw new Error('invalid configuration: REDIS_CLUSTER_NODES: set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both');
    const parsedNodes = parseClusterNodes(e.REDIS_CLUSTER_NODES);
    if (typeof parsedNodes === 'string') throw new Error(`invalid configuration: REDIS_CLUSTER_NODES: ${parsedNodes}`);
    redisCluster = parsedNodes;
  }
  const stripe = {
    live: stripeKeys('live', ['STRIPE_SECRET_KEY', 'STRIPE_PUBLISHABLE_KEY', 'STRIPE_WEBHOOK_SECRET'], [e.STRIPE_SECRET_KEY, e.STRIPE_PUBLISHABLE_KEY, e.STRIPE_WEBHOOK_SECRET]),
    test: stripeKeys('test', ['STRIPE_TEST_SECRET_KEY', 'STRIPE_TEST_PUBLISHABLE_KEY', 'STRIPE_TEST_WEBHOOK_SECRET'], [e.STRIPE_TEST_SECRET_KEY, e.STRIPE_TEST_PUBLISHABLE_KEY, e.STRIPE_TEST_WEBHOOK_SECRET]),
    apiUrl: trimSlash(e.STRIPE_API_URL),
    jsUrl: e.STRIPE_JS_URL,
    /** Stripe's own addresses (production's), not a stand-in or a proxy. */
    defaultUrls: e.STRIPE_API_URL === DEFAULT_STRIPE_API_URL && e.STRIPE_JS_URL === DEFAULT_STRIPE_JS_URL,
  };
  const deliveriesDays = e.RETENTION_WEBHOOK_DELIVERIES_DAYS ?? e.RETENTION_EVENTS_DAYS;
  if (deliveriesDays < e.RETENTION_EVENTS_DAYS) {
    throw new Error(
      `invalid configuration: RETENTION_WEBHOOK_DELIVERIES_DAYS: must be at least RETENTION_EVENTS_DAYS (${e.RETENTION_EVENTS_DAYS}): an event's deliveries are kept as long as the event`,
    );
  }
  const publicBaseUrl = trimSlash(e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`);
  return {
    /** NODE_ENV=production: nothing embedded, no database created but by `npm run migrate`, secrets kept out of logs. */
    production: e.NODE_ENV === 'production',
    databaseUrl: e.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    redisUrl: e.REDIS_URL ?? DEFAULT_REDIS_URL,
    /** Set: the service uses this Redis Cluster, and REDIS_URL is not used (nor set: both is an error). */
    redisCluster,
    /** What src/ops/local-services.ts needs to decide whether to embed Postgres or Redis. */
    localServices: {
      databaseUrlSet: e.DATABASE_URL !== undefined,
      redisUrlSet: e.REDIS_URL !== undefined || redisCluster !== null,
      embed: e.NODE_ENV !== 'production',
      dataDir: resolve(e.LOCAL_DATA_DIR ?? DEFAULT_LOCAL_DATA_DIR),
      dataDirSet: e.LOCAL_DATA_DIR !== undefined,
    },
    redisPrefix: e.REDIS_PREFIX,
    port: e.PORT,
    publicBaseUrl,
    /**
     * Where a command's printed link (users:create) points: the public address when it is set, else
     * where the commands reach the service (PAYMENTS_API_BASE, else localhost:PORT).
     */
    commandLinkBase: e.PUBLIC_BASE_URL ? publicBaseUrl : serviceAddress({ PAYMENTS_API_BASE: e.PAYMENTS_API_BASE, PORT: String(e.PORT) }).url,
    checkoutUrl: trimSlash(e.CHECKOUT_URL ?? `${publicBaseUrl}/checkout`),
    publicLinkUrl: trimSlash(e.PUBLIC_LINK_URL ?? `${publicBaseUrl}/l`),
    invoiceUrl: trimSlash(e.INVOICE_URL ?? `${publicBaseUrl}/invoices`),
    email: {
      smtpUrl: e.SMTP_URL ?? null,
      from: e.EMAIL_FROM,
      /** EMAIL_FROM left at its development default. */
      fromIsDefault: e.EMAIL_FROM === DEFAULT_EMAIL_FROM,
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
    logFlushMs: e.LOG_FLUSH_MS,
    dbPoolMax: e.DB_POOL_MAX,
    dbTimeouts: {
      statementMs: e.DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.DB_LOCK_TIMEOUT_MS,
      idleInTransactionMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    /** How the pools talk to Postgres: directly, or through a pooler in transaction mode (src/db/sql.ts). */
    dbSession: {
      transactionPooling: e.DATABASE_TRANSACTION_POOLING,
      prepare: e.DATABASE_PREPARE === undefined ? !e.DATABASE_TRANSACTION_POOLING : e.DATABASE_PREPARE === 'true' || e.DATABASE_PREPARE === '1',
    },
    webConcurrency: e.WEB_CONCURRENCY,
    apiKeyCacheMs: e.API_KEY_CACHE_SECONDS * 1000,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    fraudReviewMs: e.FRAUD_REVIEW_HOURS * 3600 * 1000,
    repairPassTimeoutMs: e.REPAIR_PASS_TIMEOUT_MS,
    /** Where GET /metrics is served: its own port (and address), and/or behind a bearer token; neither: nowhere. */
    metrics: { port: e.METRICS_PORT ?? null, host: e.METRICS_HOST ?? null, token: e.METRICS_TOKEN ?? null },
    workerLockMs: e.WORKER_LOCK_MS,
    checkoutMinExpirySeconds: e.CHECKOUT_MIN_EXPIRY_SECONDS,
    webhookBackoffBaseMs: e.WEBHOOK_BACKOFF_BASE_MS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowInsecureTargets: e.WEBHOOK_ALLOW_INSECURE_TARGETS,
    webhookDisableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
    webhookDisableMinFailures: e.WEBHOOK_DISABLE_MIN_FAILURES,
    /** WEBHOOK_TEST_LOCAL_TARGETS as set; null when unset (then `localSetup` decides: src/webhooks/url.ts). */
    webhookTestLocalTargets: e.WEBHOOK_TEST_LOCAL_TARGETS === undefined ? null : e.WEBHOOK_TEST_LOCAL_TARGETS === 'true' || e.WEBHOOK_TEST_LOCAL_TARGETS === '1',
    /**
     * The service is clearly on a developer's machine (issue 21): PUBLIC_BASE_URL's host is loopback
     * (as the default http://localhost:PORT is), or it runs on the embedded services (the runtime
     * sets this once it has started them). Test-mode endpoints may then be local by default, and
     * the response excerpts of private targets are shown.
     */
    localSetup: isLoopbackUrl(publicBaseUrl) || e.EMBEDDED_SERVICES,
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
      signInSlowdownPerEmailPerHour: e.DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR,
      passwordLinkSeconds: e.DASHBOARD_PASSWORD_LINK_HOURS * 3600,
    },
    /** Days each bounded table keeps its rows (src/retention/); idempotency keys follow KEY_TTL. */
    retention: {
      eventsDays: e.RETENTION_EVENTS_DAYS,
      webhookDeliveriesDays: deliveriesDays,
      emailsDays: e.RETENTION_EMAILS_DAYS,
      processorEventsDays: e.RETENTION_PROCESSOR_EVENTS_DAYS,
      partitionsAheadDays: e.RETENTION_PARTITIONS_AHEAD_DAYS,
    },
    exports: { linkTtlSeconds: e.EXPORT_LINK_TTL_SECONDS, retentionDays: e.EXPORT_RETENTION_DAYS, streamMaxRows: e.EXPORT_STREAM_MAX_ROWS },
    portal: {
      sessionIdleSeconds: e.PORTAL_SESSION_IDLE_MINUTES * 60,
      sessionMaxSeconds: e.PORTAL_SESSION_MAX_HOURS * 3600,
      signInPerClientPerHour: e.PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR,
      signInPerEmailPerHour: e.PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR,
    },
  };
}
