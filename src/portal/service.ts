import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import { issuePortalLink, spendPortalLink, type PortalLink } from '../customers/portal-links.ts';
import type { Sql } from '../db/sql.ts';
import { withTx } from '../db/tx.ts';
import { queueEmail } from '../email/outbox.ts';
import { portalLinkEmail } from '../email/sign-in-templates.ts';
import { invalidParam, resourceMissing } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { readCsrfSecret } from '../pages/index.ts';
import type { Services } from '../services.ts';
import { customersByEmail, insertPortalSession, type PortalScope } from './store.ts';

/**
 * The customer portal's stories: emailing sign-in links to whoever an email is (the same answer on
 * the page either way: pages.ts runs this off the request's path), the merchant's link through the
 * API, and spending a link for a session. Links themselves are src/customers/portal-links.ts.
 */

/** At most this many customer records of one email get a link (the newest), in one email. */
export const MAX_RECORDS_PER_EMAIL = 5;

const DATE = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' });

/** How a customer record is told apart from the others of the same email: name, company, and since when. */
function recordLabel(c: { first_name: string; last_name: string; company_name: string | null; email: string; created_at: Date }): string {
  const name = `${c.first_name} ${c.last_name}`.trim();
  const who = [name, c.company_name?.trim()].filter(Boolean).join(', ') || c.email;
  return `${who} (since ${DATE.format(c.created_at)})`;
}

/**
 * When `email` is the email of customers of the account in `owner`'s mode: one-time links for the
 * newest MAX_RECORDS_PER_EMAIL of them and one `portal_link` email carrying them, in one
 * transaction (the email's send job is enqueued after commit; the repair pass sends it if Redis is
 * away). The email goes to the address on file of the records it signs into (the one asked for,
 * matched without regard to case). `mayEmail` is asked once a customer is found, outside the
 * transaction: false (the address had its emails for the hour) sends nothing. Answers how many
 * records there are and whether an email went.
 */
export async function emailSignInLinks(s: Services, log: Logger, owner: Owner, email: string, mayEmail: () => Promise<boolean>): Promise<{ records: number; sent: boolean }> {
  if ((await customersByEmail(s.sql, owner, email, 1)).length === 0) return { records: 0, sent: false };
  if (!(await mayEmail())) return { records: 1, sent: false };
  return withTx(s, log, async (tx) => {
    const customers = await customersByEmail(tx.sql, owner, email, MAX_RECORDS_PER_EMAIL);
    if (customers.length === 0) return { records: 0, sent: false };
    const several = customers.length > 1;
    const links: Array<PortalLink & { label: string | null }> = [];
    for (const c of customers) links.push({ ...(await issuePortalLink(tx.sql, owner, c.id, s.config.publicBaseUrl)), label: several ? recordLabel(c) : null });
    await queueEmail(tx, s, owner, {
      to: customers[0]!.email,
      template: 'portal_link',
      relatedObject: customers[0]!.id,
      render: (m) => portalLinkEmail({ merchantName: m.name, links, expiresAt: links[0]!.expiresAt, livemode: owner.livemode }),
    });
    return { records: customers.length, sent: true };
  });
}

/** A portal session just started from a link: who it is for, and the cookie's token. */
export interface StartedSession {
  scope: PortalScope;
  token: string;
}

/**
 * Spends a one-time link of the account and starts a session of its customer, in one transaction:
 * a link is never spent without the session it gives. Null when the link is unknown, of another
 * account, expired or used (of two concurrent clicks only one gets a session).
 */
export async function startPortalSession(sql: Sql, accountId: string, token: string): Promise<StartedSession | null> {
  return sql.begin(async (tx) => {
    const link = await spendPortalLink(tx, accountId, token);
    if (!link) return null;
    const scope: PortalScope = { accountId, livemode: link.livemode, customerId: link.customer_id };
    return { scope, token: await insertPortalSession(tx, scope) };
  }) as Promise<StartedSession | null>;
}

/** The portal link the merchant asked for through the API (POST /v1/customers/:id/portal-sessions). */
export interface MerchantPortalLink {
  url: string;
  expiresAt: Date;
  createdAt: Date;
  customerId: string;
  livemode: boolean;
  returnUrl: string | null;
}

/**
 * A one-time portal link for a customer of `owner` (its account and mode, else 404), with an
 * optional return URL shown as "Back to <merchant>" in the portal. The return URL travels in the
 * link with a signature (nothing to store), so a link cannot be given another one.
 */
export async function createMerchantPortalLink(s: Services, owner: Owner, customerId: string, returnUrl: string | null): Promise<MerchantPortalLink> {
  if (returnUrl !== null) {
    const problem = returnUrlProblem(returnUrl, s.config.publicBaseUrl);
    if (problem) throw invalidParam('return_url', problem);
  }
  const link = await s.sql.begin(async (tx) => {
    // Held until the link is in: a customer deleted meanwhile is a 404, never a foreign-key error.
    const [customer] = await tx`
      select id from customers where id = ${customerId} and account_id = ${owner.accountId} and livemode = ${owner.livemode} for key share`;
    if (!customer) throw resourceMissing('customer', customerId);
    return issuePortalLink(tx, owner, customerId, s.config.publicBaseUrl);
  });
  let url = link.url;
  if (returnUrl !== null) {
    const token = new URL(link.url).searchParams.get('token')!;
    url += `&return_url=${encodeURIComponent(returnUrl)}&sig=${await signReturn(s, token, returnUrl)}`;
  }
  return { url, expiresAt: link.expiresAt, createdAt: new Date(), customerId, livemode: owner.livemode, returnUrl };
}

/**
 * What is wrong with a return URL, or null: it must be an absolute https URL, or one of this
 * deployment's own origin (PUBLIC_BASE_URL, which may be plain http in development), without
 * credentials, at most 2048 characters.
 */
export function returnUrlProblem(value: string, publicBaseUrl: string): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (value.length > 2048) return 'must be at most 2048 characters';
  if (u.username || u.password) return 'must not carry a user name or password';
  if (u.protocol !== 'https:' && u.origin !== new URL(publicBaseUrl).origin) return 'must be an https URL, or a URL of this service';
  if (!u.hostname) return 'must name a host';
  return null;
}

const returnKeys = new WeakMap<Services, Promise<KeyObject>>();

/**
 * The key of return-URL signatures: derived from the service's CSRF secret (service_secrets, made by
 * the migrations and shared by every web process), with its own label so the two never mix.
 */
function returnKey(s: Services): Promise<KeyObject> {
  let key = returnKeys.get(s);
  if (!key) {
    // A KeyObject, as the CSRF secret is held (src/pages/security.ts): a Buffer key makes one per HMAC.
    key = readCsrfSecret(s.sql).then((secret) => createSecretKey(createHmac('sha256', secret).update('portal return_url').digest()));
    key.catch(() => returnKeys.delete(s));
    returnKeys.set(s, key);
  }
  return key;
}

/** A signature of `url` bound to a token (a link's, then the session's): whoever holds one cannot move the URL to another. */
export async function signReturn(s: Services, token: string, url: string): Promise<string> {
  return createHmac('sha256', await returnKey(s)).update(`${token}\n${url}`).digest('base64url');
}

/** True when `sig` is the signature of `url` for `token`, and the URL is still one the API would accept. */
export async function verifyReturn(s: Services, token: string, url: string, sig: string): Promise<boolean> {
  if (returnUrlProblem(url, s.config.publicBaseUrl) !== null) return false;
  const expected = Buffer.from(await signReturn(s, token, url));
  const given = Buffer.from(sig);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
