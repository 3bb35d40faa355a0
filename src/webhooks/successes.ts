import { withinIds } from '../db/partitions.ts';
import type { Sql } from '../db/sql.ts';
import type { AttemptRecord, DeliveryStatus } from './deliveries.ts';
import { bucketOf, HOUR_MS, mergeHourly, RING_HOURS, STATS_BUCKETS_MS } from './stats.ts';

/**
 * A batch whose attempts all succeeded, recorded in one statement (issue 28.5): the attempt rows,
 * the deliveries SUCCEEDED and the endpoints' hourly counts (stats.ts), with no transaction around
 * it (one statement commits alone) and no lock on the endpoints. That is what the transaction of
 * health.ts recordOutcomes does for such a batch when none of its endpoints is in a run of failures
 * (the usual case): a success then writes no health, so nothing is locked before the hourly rows.
 *
 * When an endpoint of the batch is failing (`failing_since` set), nothing is written and the
 * answer is null: the transaction of recordOutcomes records the batch and ends the run. The check is
 * a read of this statement's snapshot, as the transaction's locking read would be if it came first:
 * a failure committed after that snapshot starts its run after these successes.
 *
 * The hourly rows count what the update returned, so an attempt another run of the same delivery
 * recorded first counts once, as in addToHourly. Rows are written in key order (no deadlock with
 * another batch). Answers each delivery's new status in input order (null: attempt already recorded).
 */
export async function recordSuccesses(sql: Sql, records: readonly AttemptRecord[]): Promise<Array<DeliveryStatus | null> | null> {
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  const ids = col((r) => r.id);
  const hours = col((r) => Math.floor(r.result.startedAt.getTime() / HOUR_MS));
  const endpointIds = [...new Set(col((r) => r.endpointId))];
  const [row] = await sql<{ healthy: boolean; ids: string[] }[]>`
    with healthy as (
      select not exists (select 1 from webhook_endpoints where id = any(${endpointIds}::text[]) and failing_since is not null) as yes
    ), input as (
      select x.* from unnest(
        ${ids}::text[], ${col((r) => r.n)}::int[], ${col((r) => r.result.startedAt.toISOString())}::timestamptz[],
        ${col((r) => r.result.durationMs)}::int[], ${col((r) => r.result.statusCode) as number[]}::int[],
        ${col((r) => r.result.responseBody) as string[]}::text[],
        ${col((r) => (r.result.targetPrivate === null ? null : String(r.result.targetPrivate))) as string[]}::text[]::boolean[],
        ${col((r) => r.endpointId)}::text[], ${hours}::bigint[], ${hours.map((h) => h % RING_HOURS)}::int[],
        ${col((r) => bucketOf(r.result.durationMs))}::int[]
      ) as x (id, n, started_at, duration_ms, status_code, response_body, target_private, endpoint_id, hour, slot, bucket)
      where (select yes from healthy)
    ), inserted as (
      insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body, target_private)
      select id, n, started_at, duration_ms, status_code, null, response_body, target_private from input
      on conflict do nothing
      returning delivery_id, attempt
    ), updated as (
      update webhook_deliveries d set
        attempt_count = i.n, last_attempt_at = i.started_at, status = 'SUCCEEDED', next_attempt_at = null, updated_at = now()
      from input i join inserted a on a.delivery_id = i.id and a.attempt = i.n
      where d.id = i.id and d.attempt_count = i.n - 1 and ${withinIds(sql, 'd.id', ids)}
      returning d.id
    ), hourly as (
      insert into webhook_endpoint_hourly as h (endpoint_id, slot, hour, attempts, succeeded, latency_buckets)
      select i.endpoint_id, i.slot, to_timestamp(i.hour * 3600), count(*), count(*),
             array[count(*) filter (where i.bucket = 0), count(*) filter (where i.bucket = 1), count(*) filter (where i.bucket = 2),
                   count(*) filter (where i.bucket = 3), count(*) filter (where i.bucket = 4), count(*) filter (where i.bucket = 5),
                   count(*) filter (where i.bucket = 6), count(*) filter (where i.bucket = 7), count(*) filter (where i.bucket = 8),
                   count(*) filter (where i.bucket = 9)]::int[]
      from input i join updated u on u.id = i.id
      group by i.endpoint_id, i.slot, i.hour
      order by i.endpoint_id, i.slot
      ${mergeHourly(sql)}
    )
    select (select yes from healthy) as healthy, array(select id from updated) as ids`;
  if (!row!.healthy) return null;
  const done = new Set(row!.ids);
  return ids.map((id) => (done.has(id) ? 'SUCCEEDED' : null));
}

/**
 * Whether recordSuccesses can take the batch: every attempt succeeded, and their hours fall in one
 * turn of the ring (two hours of one slot in a statement would be one row written twice).
 */
export function allSucceeded(records: readonly AttemptRecord[]): boolean {
  if (records.length === 0 || !records.every((r) => r.result.ok)) return false;
  const hours = records.map((r) => Math.floor(r.result.startedAt.getTime() / HOUR_MS));
  return Math.max(...hours) - Math.min(...hours) < RING_HOURS;
}

// The statement above writes the histogram's buckets one by one.
if (STATS_BUCKETS_MS.length + 1 !== 10) throw new Error('successes.ts: the hourly histogram has 10 buckets');
