import type { KeyPermissions } from './scopes.ts';
import type { Db, Sql } from '../db/sql.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';
import { insertApiKey } from './keys.ts';

/** A stored key. The secret is not here: only its hash (never selected) and its last four characters. */
export interface ApiKeyRow {
  id: string;
  account_id: string;
  livemode: boolean;
  last4: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  /** null: full; else the restricted key's access per resource. */
  permissions: KeyPermissions | null;
}

const COLUMNS = ['id', 'account_id', 'livemode', 'last4', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'permissions'];

export async function createKey(sql: Db, o: Owner, permissions: KeyPermissions | null = null): Promise<{ row: ApiKeyRow; secret: string }> {
  const { id, secret } = await insertApiKey(sql, o.accountId, o.livemode ? 'live' : 'test', permissions);
  return { row: (await findApiKey(sql, o, id))!, secret };
}

export async function findApiKey(sql: Db, o: Owner, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await sql<ApiKeyRow[]>`
    select ${sql(COLUMNS)} from api_keys where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

export async function listApiKeys(sql: Sql, o: Owner, p: PageParams): Promise<ApiKeyRow[]> {
  const k = keyset(sql, p);
  return sql<ApiKeyRow[]>`
    select ${sql(COLUMNS)} from api_keys
    where account_id = ${o.accountId} and livemode = ${o.livemode} ${k.where}
    ${k.order} limit ${k.limit}`;
}

/** Why a key can no longer be revoked or rolled, or null when it still works. */
export function endedProblem(row: ApiKeyRow, now = new Date()): string | null {
  if (row.revoked_at) return 'This API key is already revoked.';
  if (row.expires_at && row.expires_at <= now) return 'This API key has already expired.';
  return null;
}

/**
 * Revokes the key (effective at once in this database; other processes drop it from their cache
 * within API_KEY_CACHE_SECONDS). Answers the revoked row; undefined when nothing was revoked (a
 * key of another account or mode, or one that had already ended).
 */
export async function revokeApiKey(sql: Db, o: Owner, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await sql<ApiKeyRow[]>`
    update api_keys set revoked_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}
      and revoked_at is null and (expires_at is null or expires_at > now())
    returning ${sql(COLUMNS)}`;
  return row;
}

/**
 * Rolls a key in one transaction: a new key of the same account and mode, and the old one ends
 * `expiresIn` seconds from now (0: now). Answers 'missing', the problem of a key that already
 * ended or was rolled, or the new key with its secret.
 */
export async function rollApiKey(
  sql: Sql,
  o: Owner,
  id: string,
  expiresIn: number,
  /** Runs in the roll's transaction once the new key is made (the audit event). */
  then: (tx: Db, made: ApiKeyRow) => Promise<unknown> = async () => {},
): Promise<'missing' | { problem: string } | { row: ApiKeyRow; secret: string }> {
  return sql.begin(async (tx) => {
    const [old] = await tx<ApiKeyRow[]>`
      select ${tx(COLUMNS)} from api_keys
      where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
    if (!old) return 'missing' as const;
    const problem = endedProblem(old);
    if (problem) return { problem };
    if (old.expires_at) return { problem: 'This API key was already rolled: roll or revoke its replacement instead.' };
    await tx`update api_keys set expires_at = now() + make_interval(secs => ${expiresIn}) where id = ${id}`;
    // The replacement has the same permissions: rolling never widens a restricted key.
    const made = await createKey(tx, o, old.permissions);
    await then(tx, made.row);
    return made;
  }) as Promise<'missing' | { problem: string } | { row: ApiKeyRow; secret: string }>;
}

/** Records that the key was used just now (called off the request's path). */
export async function touchKey(sql: Sql, id: string): Promise<void> {
  await sql`update api_keys set last_used_at = now() where id = ${id}`;
}
