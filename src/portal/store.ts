import { createHash, randomBytes } from 'node:crypto';
import { hashPortalToken } from '../customers/portal-links.ts';
import type { Db, Sql } from '../db/sql.ts';
import type { Owner } from '../lib/owner.ts';
import type { PageBrand } from '../pages/index.ts';

/**
 * Portal sessions (migrations/0019_portal.sql): a random 256-bit token in the customer's cookie,
 * only its sha256 kept, bound to one customer of one account and mode. The one-time links that
 * start them are made and spent by src/customers/portal-links.ts.
 */

/** Who a portal page is for: every query of the signed-in pages filters on all three. */
export interface PortalScope extends Owner {
  customerId: string;
}

export interface PortalSessionRow {
  token_hash: Buffer;
  account_id: string;
  livemode: boolean;
  customer_id: string;
  created_at: Date;
  last_seen_at: Date;
  /** The customer's email, name and company, as the pages greet them. */
  email: string;
  first_name: string;
  last_name: string;
  company_name: string | null;
}

export const scopeOf = (se: PortalSessionRow): PortalScope => ({ accountId: se.account_id, livemode: se.livemode, customerId: se.customer_id });

export const hashSessionToken = (token: string): Buffer => createHash('sha256').update(token).digest();

/** The account of a portal URL and what its pages show of it; undefined when there is no such account. */
export async function findAccountBrand(sql: Db, accountId: string): Promise<(PageBrand & { support_email: string | null }) | undefined> {
  const [row] = await sql<(PageBrand & { support_email: string | null })[]>`
    select business_name, brand_color, logo_url, support_email from accounts where id = ${accountId}`;
  return row;
}

/** A new session of the customer; answers its token (only the hash is stored). */
export async function insertPortalSession(sql: Db, scope: PortalScope): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await sql`
    insert into portal_sessions (token_hash, account_id, livemode, customer_id)
    values (${hashSessionToken(token)}, ${scope.accountId}, ${scope.livemode}, ${scope.customerId})`;
  return token;
}

/**
 * The live session of a token under this account's portal, its last_seen_at touched (at most once
 * a minute); null when unknown, of another account, or past either limit (such a session is deleted).
 */
export async function findPortalSession(sql: Sql, accountId: string, token: string, idleSeconds: number, maxSeconds: number): Promise<PortalSessionRow | null> {
  const hash = hashSessionToken(token);
  const [row] = await sql<(PortalSessionRow & { expired: boolean })[]>`
    select s.token_hash, s.account_id, s.livemode, s.customer_id, s.created_at, s.last_seen_at,
      c.email, c.first_name, c.last_name, c.company_name,
      (s.last_seen_at < now() - make_interval(secs => ${idleSeconds}) or s.created_at < now() - make_interval(secs => ${maxSeconds})) as expired
    from portal_sessions s
    join customers c on c.id = s.customer_id and c.account_id = s.account_id and c.livemode = s.livemode
    where s.token_hash = ${hash} and s.account_id = ${accountId}`;
  if (!row) return null;
  if (row.expired) {
    await deletePortalSession(sql, hash);
    return null;
  }
  if (Date.now() - row.last_seen_at.getTime() > 60_000) await sql`update portal_sessions set last_seen_at = now() where token_hash = ${hash}`;
  const { expired: _, ...session } = row;
  return session;
}

export async function deletePortalSession(sql: Db, tokenHash: Buffer): Promise<void> {
  await sql`delete from portal_sessions where token_hash = ${tokenHash}`;
}

/** The mode of a link of this account, spent or not (the "link no longer works" page offers a new one in it); null when unknown. */
export async function linkMode(sql: Db, accountId: string, token: string): Promise<boolean | null> {
  const [row] = await sql<{ livemode: boolean }[]>`
    select livemode from portal_links where token_hash = ${hashPortalToken(token)} and account_id = ${accountId}`;
  return row?.livemode ?? null;
}

/**
 * Who a link of this account would sign in, without spending it (the portal asks before it replaces
 * an open session of another customer); null when the link would not work (unknown, used, expired).
 */
export async function linkCustomer(sql: Db, accountId: string, token: string) {
  const [row] = await sql<{ customer_id: string; livemode: boolean; email: string; first_name: string; last_name: string }[]>`
    select l.customer_id, l.livemode, c.email, c.first_name, c.last_name
    from portal_links l join customers c on c.id = l.customer_id and c.account_id = l.account_id and c.livemode = l.livemode
    where l.token_hash = ${hashPortalToken(token)} and l.account_id = ${accountId} and l.used_at is null and l.expires_at > now()`;
  return row ?? null;
}

/** The customer records of the account and mode with this email (case-insensitive), newest first. */
export async function customersByEmail(sql: Db, o: Owner, email: string, limit: number) {
  return sql<{ id: string; email: string; first_name: string; last_name: string; company_name: string | null; created_at: Date }[]>`
    select id, email, first_name, last_name, company_name, created_at from customers
    where account_id = ${o.accountId} and livemode = ${o.livemode} and lower(email) = lower(${email})
    order by id desc limit ${limit}`;
}

/**
 * The hourly clean-up (workers/maintenance.ts): sessions past either limit (refused the moment they
 * pass one; this removes the rows nobody presents again), and links a day after they expired or were
 * used. Returns how many rows went.
 */
export async function deleteEndedPortalSessions(sql: Sql, idleSeconds: number, maxSeconds: number): Promise<number> {
  const sessions = await sql`
    delete from portal_sessions
    where last_seen_at < now() - make_interval(secs => ${idleSeconds}) or created_at < now() - make_interval(secs => ${maxSeconds})`;
  const links = await sql`
    delete from portal_links
    where expires_at < now() - interval '1 day' or used_at < now() - interval '1 day'`;
  return sessions.count + links.count;
}
