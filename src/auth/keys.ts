import type { KeyPermissions } from './scopes.ts';
import { createHash, randomInt } from 'node:crypto';
import type { Db, Sql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';

export type Mode = 'test' | 'live';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32}$/;

export const hashKey = (key: string): Buffer => createHash('sha256').update(key).digest();

/** A secret key: `sk_<mode>_` then 32 base62 characters (about 190 random bits). */
function generateKey(mode: Mode): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return `sk_${mode}_${body}`;
}

/** A new account; `businessName` is the name payers see (emails, invoices), null until set. */
export async function createAccount(sql: Sql, businessName: string | null = null): Promise<string> {
  const id = newId('acct');
  await sql`insert into accounts (id, business_name) values (${id}, ${businessName})`;
  return id;
}

/** The account's business name (null when unset, or for no such account). */
export async function getBusinessName(sql: Db, accountId: string): Promise<string | null> {
  const [row] = await sql<{ business_name: string | null }[]>`select business_name from accounts where id = ${accountId}`;
  return row?.business_name ?? null;
}

/** What payers see of the account: the name, the Reply-To of its emails, the colour and logo of its hosted pages. */
export interface AccountBranding {
  business_name: string | null;
  support_email: string | null;
  brand_color: string | null;
  logo_url: string | null;
}

/** The account's branding (all null when unset, or for no such account). */
export async function getBranding(sql: Db, accountId: string): Promise<AccountBranding> {
  const [row] = await sql<AccountBranding[]>`
    select business_name, support_email, brand_color, logo_url from accounts where id = ${accountId}`;
  return row ?? { business_name: null, support_email: null, brand_color: null, logo_url: null };
}

/** Sets the given fields of the account's branding (undefined: left as it is). */
export async function setBranding(sql: Db, accountId: string, changes: Partial<AccountBranding>): Promise<void> {
  const columns = ['business_name', 'support_email', 'brand_color', 'logo_url'] as const;
  const set = Object.fromEntries(columns.filter((c) => changes[c] !== undefined).map((c) => [c, changes[c]]));
  if (Object.keys(set).length === 0) return;
  await sql`update accounts set ${sql(set)} where id = ${accountId}`;
}

export async function setBusinessName(sql: Sql, accountId: string, name: string | null): Promise<void> {
  await sql`update accounts set business_name = ${name} where id = ${accountId}`;
}

/**
 * The rules of a business name, shared by POST /v1/account and keys:create: trimmed, 1 to 100
 * characters, no control characters (it is an email sender name and a page heading). Answers the
 * problem, or null.
 */
export function businessNameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > BUSINESS_NAME_MAX) return `must be at most ${BUSINESS_NAME_MAX} characters`;
  if (/\p{Cc}/u.test(name)) return 'must not contain control characters (line breaks, tabs)';
  return null;
}
export const BUSINESS_NAME_MAX = 100;

export async function accountExists(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`select 1 from accounts where id = ${id}`;
  return rows.length > 0;
}

/** Creates a key and returns the secret: only its hash is stored, so this is the one time it is seen. */
export async function createApiKey(sql: Sql, accountId: string, mode: Mode): Promise<string> {
  return (await insertApiKey(sql, accountId, mode)).secret;
}

/** Inserts a new key; answers its id and its secret (the only time the secret exists outside the caller). */
export async function insertApiKey(sql: Db, accountId: string, mode: Mode, permissions: KeyPermissions | null = null): Promise<{ id: string; secret: string }> {
  const secret = generateKey(mode);
  const id = newId('key');
  await sql`
    insert into api_keys (id, account_id, livemode, key_hash, last4, permissions)
    values (${id}, ${accountId}, ${mode === 'live'}, ${hashKey(secret)}, ${secret.slice(-4)}, ${permissions === null ? null : sql.json(permissions as never)})`;
  return { id, secret };
}

/** What a valid key resolves to: its owner, its id, and when it stops working (a roll's overlap), if ever. */
export interface KeyMatch {
  owner: Owner;
  keyId: string;
  expiresAt: Date | null;
  /** null: a full key; else what the restricted key may do (scopes.ts). */
  permissions: KeyPermissions | null;
}

/** The key's owner, unless it is unknown, revoked or past its `expires_at`. */
export async function findKey(sql: Sql, key: string): Promise<KeyMatch | null> {
  const [row] = await sql<{ id: string; account_id: string; livemode: boolean; expires_at: Date | null; permissions: KeyPermissions | null }[]>`
    select id, account_id, livemode, expires_at, permissions from api_keys
    where key_hash = ${hashKey(key)} and revoked_at is null and (expires_at is null or expires_at > now())`;
  return row ? { owner: { accountId: row.account_id, livemode: row.livemode }, keyId: row.id, expiresAt: row.expires_at, permissions: row.permissions } : null;
}

export async function findKeyOwner(sql: Sql, key: string): Promise<Owner | null> {
  return (await findKey(sql, key))?.owner ?? null;
}
