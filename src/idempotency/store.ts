import { lockKey } from '../db/locks.ts';
import type { Db, Sql } from '../db/sql.ts';

/**
 * How long a key and its answer are kept (Stripe's 24 hours): within it a retry gets the stored
 * answer; after it the key can be claimed again. The table is partitioned by day of `created_at`
 * (migration 0026) and a day's partition is dropped once its newest key is older than this
 * (src/retention/), so a key is never forgotten before KEY_TTL.
 */
export const KEY_TTL = '24 hours';
export const KEY_TTL_MS = 24 * 3600 * 1000;
/** A first request that has held its key this long is taken to have died; the key can be used again. */
const STALE_LOCK = '60 seconds';

export interface KeyRef {
  accountId: string;
  livemode: boolean;
  key: string;
}

export interface StoredKey {
  fingerprint: string;
  status: number | null;
  response: unknown;
  request_id: string;
}

/** The key's row made within KEY_TTL: `created_at` in the condition prunes to the last day's partitions. */
const live = (sql: Db, k: KeyRef) =>
  sql`account_id = ${k.accountId} and livemode = ${k.livemode} and key = ${k.key} and created_at > now() - ${KEY_TTL}::interval`;

/**
 * Claims the key for this request: a new row, or an expired or abandoned one taken over. False:
 * someone holds it. A unique index cannot span the partitions, so claims of one key take turns
 * (src/db/locks.ts): the one that finds no live row, or only an abandoned one, replaces the key's
 * rows with its own.
 */
export async function claimKey(sql: Sql, k: KeyRef, fingerprint: string, requestId: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    await lockKey(tx, 'idempotency_keys', `${k.accountId}:${k.livemode}:${k.key}`);
    const [held] = await tx`
      select 1 from idempotency_keys
      where ${live(tx, k)}
        and not (status is null and locked_at < now() - ${STALE_LOCK}::interval)
      limit 1`;
    if (held) return false;
    await tx`delete from idempotency_keys where account_id = ${k.accountId} and livemode = ${k.livemode} and key = ${k.key}`;
    await tx`
      insert into idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id)
      values (${k.accountId}, ${k.livemode}, ${k.key}, ${fingerprint}, now(), ${requestId})`;
    return true;
  });
}

export async function findKey(sql: Sql, k: KeyRef): Promise<StoredKey | undefined> {
  const [row] = await sql<StoredKey[]>`
    select fingerprint, status, response, request_id from idempotency_keys
    where ${live(sql, k)} order by created_at desc limit 1`;
  return row;
}

/** The answer of the first request, replayed to every identical retry. */
export async function saveResponse(sql: Sql, k: KeyRef, status: number, body: unknown): Promise<void> {
  await sql`
    update idempotency_keys set status = ${status}, response = ${sql.json(body as never)}, locked_at = null
    where ${live(sql, k)}`;
}

export async function releaseKey(sql: Sql, k: KeyRef): Promise<void> {
  await sql`delete from idempotency_keys where ${live(sql, k)}`;
}
