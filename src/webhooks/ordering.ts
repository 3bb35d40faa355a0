import type { Sql, TxSql } from '../db/sql.ts';

/**
 * Ordered endpoints (issue 26, point 6), kept in Postgres. A delivery made for an ordered endpoint
 * carries its event's `data.object.id` (`object_id`). Before its attempt, such a delivery is
 * *parked* (PENDING with next_attempt_at null, its job completes) while an earlier delivery of the
 * same endpoint and object is open (PENDING or PAUSED); "earlier" is event order, (event_id, id).
 * When a delivery ends for good (SUCCEEDED, FAILED after its last attempt, CANCELLED because its
 * event expired), the first open delivery after it is woken (next_attempt_at now, a job again).
 * Other objects are not concerned: they flow in parallel.
 *
 * Park and wake of one (endpoint, object) take the same transaction-scoped advisory lock, so that a
 * park that saw its predecessor open is committed before the predecessor's wake looks for it (the
 * wake then finds it parked), or the park runs after the predecessor's end was committed (and sees
 * it). A wake lost to a crash is repaired by `wakeOrphans` in the reconcile pass; a woken delivery
 * whose job could not be added is due, so the reconcile pass adds it like any other.
 */

type Ordered = { id: string; endpoint_id: string; event_id: string; object_id: string };

const lock = (tx: TxSql, endpointId: string, objectId: string) =>
  tx`select pg_advisory_xact_lock(hashtext('webhook_ordered'), hashtext(${endpointId} || ':' || ${objectId}))`;

/** Parks `d` behind the earliest open delivery before it; answers that delivery's id, or null when `d` may go now. */
export async function parkBehindEarlier(sql: Sql, d: Ordered): Promise<string | null> {
  return sql.begin(async (tx) => {
    await lock(tx, d.endpoint_id, d.object_id);
    const [row] = await tx<{ blocker: string }[]>`
      with blocker as (
        select p.id from webhook_deliveries p
        where p.endpoint_id = ${d.endpoint_id} and p.object_id = ${d.object_id} and p.status in ('PENDING', 'PAUSED')
          and (p.event_id, p.id) < (${d.event_id}::text collate "C", ${d.id}::text collate "C")
        order by p.event_id, p.id limit 1
      )
      update webhook_deliveries set next_attempt_at = null, updated_at = now()
      where id = ${d.id} and status = 'PENDING' and exists (select 1 from blocker)
      returning (select id from blocker) as blocker`;
    return row?.blocker ?? null;
  });
}

/**
 * After `d` ended for good: wakes the first open delivery of its endpoint and object if it is parked.
 * Answers the id woken (its job is the caller's, after this commits), or null.
 */
export async function wakeNext(sql: Sql, d: Pick<Ordered, 'endpoint_id' | 'object_id'>): Promise<string | null> {
  return sql.begin(async (tx) => {
    await lock(tx, d.endpoint_id, d.object_id);
    const [row] = await tx<{ id: string }[]>`
      update webhook_deliveries set next_attempt_at = now(), updated_at = now()
      where id = (
        select p.id from webhook_deliveries p
        where p.endpoint_id = ${d.endpoint_id} and p.object_id = ${d.object_id} and p.status in ('PENDING', 'PAUSED')
        order by p.event_id, p.id limit 1
      ) and status = 'PENDING' and next_attempt_at is null
      returning id`;
    return row?.id ?? null;
  });
}

/**
 * The repair of a lost wake: parked deliveries with no open delivery before them are made due again
 * (the reconcile pass then enqueues them). At most `limit` per call; answers how many.
 */
export async function wakeOrphans(sql: Sql, limit = 500): Promise<number> {
  const rows = await sql`
    update webhook_deliveries set next_attempt_at = now(), updated_at = now()
    where id in (
      select d.id from webhook_deliveries d
      where d.status = 'PENDING' and d.next_attempt_at is null and d.object_id is not null
        and not exists (
          select 1 from webhook_deliveries p
          where p.endpoint_id = d.endpoint_id and p.object_id = d.object_id and p.status in ('PENDING', 'PAUSED')
            and (p.event_id, p.id) < (d.event_id, d.id))
      limit ${limit}
    ) and status = 'PENDING' and next_attempt_at is null
    returning id`;
  return rows.length;
}

/** An endpoint no longer ordered: its open deliveries forget their object, and the parked ones are due now. */
export async function unorder(sql: TxSql, endpointId: string): Promise<string[]> {
  const rows = await sql<{ id: string; parked: boolean }[]>`
    update webhook_deliveries d set object_id = null,
      next_attempt_at = case when d.status = 'PENDING' and d.next_attempt_at is null then now() else d.next_attempt_at end,
      updated_at = now()
    from (select id, status = 'PENDING' and next_attempt_at is null as parked from webhook_deliveries
          where endpoint_id = ${endpointId} and object_id is not null and status in ('PENDING', 'PAUSED')) o
    where d.id = o.id
    returning d.id, o.parked`;
  return rows.filter((r) => r.parked).map((r) => r.id);
}
