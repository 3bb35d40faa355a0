import type { TxSql } from './sql.ts';

/**
 * Serialises the transactions that write one key of a partitioned table whose uniqueness no index
 * can hold: a unique index of a partitioned table must contain the partition key, so an email's
 * dedupe key, an idempotency key or a Stripe event id is unique only per partition (migration 0026).
 * The writer takes this lock, then looks for the key in every partition in a statement of its own
 * (under read committed it sees what the previous holder committed), then inserts. A transaction
 * lock, released at commit or rollback: no session state, so it holds behind PgBouncer in
 * transaction mode. Two different keys may share a hash and then wait for each other briefly.
 */
export async function lockKey(tx: TxSql, table: string, key: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext(${table}), hashtext(${key}))`;
}
