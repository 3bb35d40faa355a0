import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/sql.ts';
import type { Owner } from '../lib/owner.ts';

/**
 * One-time sign-in links to a customer's portal (issue 16): a random 256-bit token in the link,
 * only its sha256 stored (migrations/0019_portal.sql). A link works once and for a short time; it is
 * emailed when the customer asks for one on the portal's page, sent with a failed installment's
 * notice, or made by the merchant (POST /v1/customers/:id/portal-sessions). The portal component
 * (src/portal) spends links and keeps the sessions; this module only makes and spends links, so that
 * any component may put one in an email without depending on the portal.
 */

/** How long a portal link works: 15 minutes. */
export const PORTAL_LINK_TTL_SECONDS = 15 * 60;

/** A token of the link's shape (43 base64url characters). */
export const PORTAL_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const hashPortalToken = (token: string): Buffer => createHash('sha256').update(token).digest();

/** The portal's page of an account: where a customer asks for a sign-in link. */
export const portalUrl = (publicBaseUrl: string, accountId: string): string => `${publicBaseUrl}/portal/${accountId}`;

export interface PortalLink {
  url: string;
  expiresAt: Date;
}

/**
 * A new one-time link for the customer (of `owner`'s account and mode), valid `ttlSeconds`. Call it
 * in the transaction that sends it (an email row), so that a link exists only if it goes out.
 */
export async function issuePortalLink(sql: Db, owner: Owner, customerId: string, publicBaseUrl: string, ttlSeconds = PORTAL_LINK_TTL_SECONDS): Promise<PortalLink> {
  const token = randomBytes(32).toString('base64url');
  const [row] = await sql<{ expires_at: Date }[]>`
    insert into portal_links (token_hash, account_id, livemode, customer_id, expires_at)
    values (${hashPortalToken(token)}, ${owner.accountId}, ${owner.livemode}, ${customerId}, now() + make_interval(secs => ${ttlSeconds}))
    returning expires_at`;
  return { url: `${portalUrl(publicBaseUrl, owner.accountId)}/sign-in?token=${token}`, expiresAt: row!.expires_at };
}

/**
 * Spends a link of the account: the customer it signs in (and the mode), or null when the token is
 * unknown, of another account, expired or already used. Of two concurrent uses only one succeeds.
 */
export async function spendPortalLink(sql: Db, accountId: string, token: string): Promise<{ customer_id: string; livemode: boolean } | null> {
  if (!PORTAL_TOKEN.test(token)) return null;
  const [row] = await sql<{ customer_id: string; livemode: boolean }[]>`
    update portal_links set used_at = now()
    where token_hash = ${hashPortalToken(token)} and account_id = ${accountId} and used_at is null and expires_at > now()
    returning customer_id, livemode`;
  return row ?? null;
}
