import type { Sql } from '../db/sql.ts';

/**
 * How long a key and its answer are kept (Stripe's 24 hours): within it a retry gets the stored
 * answer; after it the key can be claimed again, and the hourly clean-up deletes it.
 */
export const KEY_TTL = '24 hours';
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

/** Claims the key for this request: a new row, or an expired or abandoned one taken over. False: someone holds it. */
export async function claimKey(sql: Sql, k: KeyRef, fingerprint: string, requestId: string): Promise<boolean> {
  const claimed = await sql`
    insert into idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id)
    values (${k.accountId}, ${k.livemode}, ${k.key}, ${fingerprint}, now(), ${requestId})
    on conflict (account_id, livemode, key) do update
      set fingerprint = excluded.fingerprint, locked_at = now(), status = null, response = null,
          request_id = excluded.request_id, created_at = now()
      where idempotency_keys.created_at < now() - ${KEY_TTL}::interval
         or (idempotency_keys.status is null and idempotency_keys.locked_at < now() - ${STALE_LOCK}::interval)
    returning 1`;
  return claimed.length > 0;
}

export async function findKey(sql: Sql, k: KeyRef): Promise<StoredKey | undefined> {
  const [row] = await sql<StoredKey[]>`
    select fingerprint, status, response, request_id from idempotency_keys
    where account_id = ${k.accountId} and livemode = ${k.livemode} and key = ${k.key}`;
  return row;
}

/** The answer of the first request, replayed to every identical retry. */
export async function saveResponse(sql: Sql, k: KeyRef, status: number, body: unknown): Promise<void> {
  await sql`
    update idempotency_keys set status = ${status}, response = ${sql.json(body as never)}, locked_at = null
    where account_id = ${k.accountId} and livemode = ${k.livemode} and key = ${k.key}`;
}

export async function releaseKey(sql: Sql, k: KeyRef): Promise<void> {
  await sql`delete from idempotency_keys where account_id = ${k.accountId} and livemode = ${k.livemode} and key = ${k.key}`;
}

/** The hourly clean-up (workers/maintenance.ts): keys older than KEY_TTL go. Returns how many. */
export async function deleteExpiredKeys(sql: Sql): Promise<number> {
  const removed = await sql`delete from idempotency_keys where created_at < now() - ${KEY_TTL}::interval`;
  return removed.count;
}
