import type { Config } from '../config.ts';
import { localTargetsOn } from '../webhooks/url.ts';

/**
 * What a production deployment needs, read from the configuration alone (issue 22, point 7): the
 * "Going live" checklist of the README as data, printed by `npm run check` and summed up in
 * `GET /readyz` (`config`). Names and reasons only: no value is ever shown, secrets or not.
 */
export interface SettingCheck {
  /** The setting or settings, as the environment spells them. */
  setting: string;
  ok: boolean;
  /** Required for production; an optional one is advice (TRUST_PROXY behind a load balancer, Bull Board). */
  required: boolean;
  /** What it is for, or what is wrong. */
  note: string;
}

/** Is `url` an https address on a public name (not localhost, not a bare loopback address)? */
function publicHttps(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'https:' && !/^(localhost|127\.|\[::1\]$)/.test(u.hostname) && !u.hostname.endsWith('.localhost');
}

export function productionChecks(c: Config): SettingCheck[] {
  return [
    { setting: 'NODE_ENV', ok: c.production, required: true, note: 'production: nothing embedded, no database created but by the release step, one-time links kept out of the log' },
    {
      setting: 'PUBLIC_BASE_URL',
      ok: publicHttps(c.publicBaseUrl),
      required: true,
      note: "the service's public https address: payers' pages, emailed links, and Stripe's webhook address (<PUBLIC_BASE_URL>/processor/stripe/webhook)",
    },
    { setting: 'SMTP_URL', ok: c.email.smtpUrl !== null, required: true, note: 'the mail server: without it receipts, invoices and invitations only go to the log' },
    { setting: 'EMAIL_FROM', ok: !c.email.fromIsDefault, required: true, note: "the address emails come from: your domain's, not the development default" },
    {
      setting: 'STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET',
      ok: c.stripe.live !== null,
      required: true,
      note: 'live Stripe keys: without them live payments are off (charges_enabled false)',
    },
    {
      setting: 'WEBHOOK_ALLOW_INSECURE_TARGETS',
      ok: !c.webhookAllowInsecureTargets,
      required: true,
      note: 'must stay false: it lets webhooks reach http and private addresses',
    },
    {
      setting: 'STRIPE_API_URL, STRIPE_JS_URL',
      ok: c.stripe.defaultUrls,
      required: true,
      note: "Stripe's own addresses (the defaults): other values are for the tests' stand-ins",
    },
    {
      setting: 'WEBHOOK_TEST_LOCAL_TARGETS',
      ok: !localTargetsOn(c),
      required: false,
      note: 'off in production unless test keys may point webhooks inside your network',
    },
    { setting: 'TRUST_PROXY', ok: c.trustProxy !== false, required: false, note: "behind a load balancer, its address or hop count: else every payer looks like the balancer to the rate limits" },
    { setting: 'ADMIN_USER, ADMIN_PASSWORD', ok: c.admin !== null, required: false, note: 'Bull Board at /admin/queues, behind basic auth (not mounted without them)' },
  ];
}

/**
 * The `config` section of GET /readyz: which production settings are missing (required) or unset
 * (advice), by name. It never changes the probe's status: readiness is "this process can serve
 * now" (Postgres and Redis answer), and taking every instance out of the load balancer for a
 * setting would turn a configuration gap into an outage.
 */
export function configReadiness(c: Config): { production: boolean; missing: string[]; advice: string[] } {
  const checks = productionChecks(c);
  return {
    production: c.production,
    missing: checks.filter((x) => x.required && !x.ok).map((x) => x.setting),
    advice: checks.filter((x) => !x.required && !x.ok).map((x) => x.setting),
  };
}
