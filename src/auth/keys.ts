import { createHash, randomInt } from 'node:crypto';
import type { Sql } from '../db/sql.ts';
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

export async function createAccount(sql: Sql): Promise<string> {
  const id = newId('acct');
  await sql`insert into accounts (id) values (${id})`;
  return id;
}

export async function accountExists(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`select 1 from accounts where id = ${id}`;
  return rows.length > 0;
}

/** Creates a key and returns the secret: only its hash is stored, so this is the one time it is seen. */
export async function createApiKey(sql: Sql, accountId: string, mode: Mode): Promise<string> {
  const key = generateKey(mode);
  await sql`
    insert into api_keys (id, account_id, livemode, key_hash, last4)
    values (${newId('key')}, ${accountId}, ${mode === 'live'}, ${hashKey(key)}, ${key.slice(-4)})`;
  return key;
}

export async function findKeyOwner(sql: Sql, key: string): Promise<Owner | null> {
  const [row] = await sql<{ account_id: string; livemode: boolean }[]>`
    select account_id, livemode from api_keys where key_hash = ${hashKey(key)} and revoked_at is null`;
  return row ? { accountId: row.account_id, livemode: row.livemode } : null;
}
