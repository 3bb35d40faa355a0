import type { Db } from '../db/sql.ts';

/** Whether Stripe's event `id` was handled already (processor_events, migration 0011). */
export async function isHandled(sql: Db, id: string): Promise<boolean> {
  const [row] = await sql`select 1 from processor_events where id = ${id}`;
  return !!row;
}

/** Records the event as handled; false when another delivery of it recorded it first. */
export async function markHandled(sql: Db, id: string, type: string, livemode: boolean): Promise<boolean> {
  const rows = await sql`
    insert into processor_events (id, type, livemode) values (${id}, ${type}, ${livemode})
    on conflict (id) do nothing returning id`;
  return rows.length > 0;
}
