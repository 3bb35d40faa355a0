import { lockKey } from '../db/locks.ts';
import type { Db, Sql } from '../db/sql.ts';

/**
 * Whether Stripe's event `id` was handled already (processor_events: kept RETENTION_PROCESSOR_EVENTS_DAYS,
 * longer than Stripe sends copies of an event). Partitioned by `received_at`, not by this id (Stripe's,
 * not time-ordered): the lookup searches each partition's index on id.
 */
export async function isHandled(sql: Db, id: string): Promise<boolean> {
  const [row] = await sql`select 1 from processor_events where id = ${id} limit 1`;
  return !!row;
}

/**
 * Records the event as handled; false when another delivery of it recorded it first. No index can
 * hold the id unique across partitions: writers of one id take turns (src/db/locks.ts).
 */
export async function markHandled(sql: Sql, id: string, type: string, livemode: boolean): Promise<boolean> {
  return sql.begin(async (tx) => {
    await lockKey(tx, 'processor_events', id);
    const rows = await tx`
      insert into processor_events (id, type, livemode)
      select ${id}, ${type}, ${livemode} where not exists (select 1 from processor_events where id = ${id})
      returning id`;
    return rows.length > 0;
  });
}
