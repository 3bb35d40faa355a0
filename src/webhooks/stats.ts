import type { Db, TxSql } from '../db/sql.ts';
import type { AttemptRecord } from './deliveries.ts';

/**
 * Delivery analytics (issue 26, point 5): per endpoint and hour, attempts, successes and a
 * histogram of durations, kept in the transaction that records the attempts (health.ts
 * recordOutcomes), in a 30-day ring of hourly slots (migration 0036). Read in one indexed query.
 */

/** Upper bounds (ms) of the duration buckets; the last bucket is everything above the last bound. */
export const STATS_BUCKETS_MS = [25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;
export const HOUR_MS = 3600_000;
export const RING_HOURS = 720;

export const bucketOf = (ms: number): number => {
  const i = STATS_BUCKETS_MS.findIndex((b) => ms <= b);
  return i === -1 ? STATS_BUCKETS_MS.length : i;
};

/**
 * The conflict clause of an insert into webhook_endpoint_hourly (alias `h`): counts of the same hour
 * add up, a newer hour replaces the older one in its slot of the ring, an older one changes nothing.
 */
export const mergeHourly = (sql: Db) =>
  sql.unsafe(`on conflict (endpoint_id, slot) do update set
      attempts = case when h.hour = excluded.hour then h.attempts + excluded.attempts else excluded.attempts end,
      succeeded = case when h.hour = excluded.hour then h.succeeded + excluded.succeeded else excluded.succeeded end,
      latency_buckets = case when h.hour = excluded.hour
        then array(select a + b from unnest(h.latency_buckets, excluded.latency_buckets) with ordinality as u (a, b, i) order by i)
        else excluded.latency_buckets end,
      hour = excluded.hour
    where h.hour <= excluded.hour`);

/** Adds a batch's recorded attempts to their endpoints' hours: one statement, rows in key order (no deadlock). */
export async function addToHourly(tx: TxSql, recorded: readonly AttemptRecord[]): Promise<void> {
  const rows = new Map<string, { endpointId: string; hour: number; attempts: number; succeeded: number; buckets: number[] }>();
  for (const r of recorded) {
    const hour = Math.floor(r.result.startedAt.getTime() / HOUR_MS);
    const key = `${r.endpointId}:${hour % RING_HOURS}`;
    let row = rows.get(key);
    if (!row || row.hour < hour) {
      row = { endpointId: r.endpointId, hour, attempts: 0, succeeded: 0, buckets: new Array<number>(STATS_BUCKETS_MS.length + 1).fill(0) };
      rows.set(key, row);
    } else if (row.hour > hour) continue;
    row.attempts++;
    if (r.result.ok) row.succeeded++;
    row.buckets[bucketOf(r.result.durationMs)]!++;
  }
  if (rows.size === 0) return;
  const list = [...rows.values()].sort((a, b) => (a.endpointId === b.endpointId ? (a.hour % RING_HOURS) - (b.hour % RING_HOURS) : a.endpointId < b.endpointId ? -1 : 1));
  await tx`
    insert into webhook_endpoint_hourly as h (endpoint_id, slot, hour, attempts, succeeded, latency_buckets)
    select x.endpoint_id, x.slot, to_timestamp(x.hour * 3600), x.attempts, x.succeeded, string_to_array(x.buckets, ',')::int[]
    from unnest(${list.map((r) => r.endpointId)}::text[], ${list.map((r) => r.hour % RING_HOURS)}::int[], ${list.map((r) => r.hour)}::bigint[],
                ${list.map((r) => r.attempts)}::int[], ${list.map((r) => r.succeeded)}::int[], ${list.map((r) => r.buckets.join(','))}::text[])
      as x (endpoint_id, slot, hour, attempts, succeeded, buckets)
    order by x.endpoint_id, x.slot
    ${mergeHourly(tx)}`;
}

export interface HourRow {
  hour: Date;
  attempts: number;
  succeeded: number;
  latency_buckets: number[];
}

/** The one query of the analytics: the endpoint's hours of the last 30 days (at most 720 rows, by its primary key). */
export async function hourlyOf(db: Db, endpointId: string, now: Date): Promise<HourRow[]> {
  return db<HourRow[]>`
    select hour, attempts, succeeded, latency_buckets from webhook_endpoint_hourly
    where endpoint_id = ${endpointId} and hour > ${new Date(now.getTime() - RING_HOURS * HOUR_MS)}
    order by hour`;
}

export interface PeriodStats {
  attempts: number;
  succeeded: number;
  failed: number;
  /** Succeeded / attempts, 0 to 1; null without attempts. */
  success_rate: number | null;
  /** From the histogram: linear within the bucket the percentile falls in (the last bucket counts as the timeout). */
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}

export function percentile(buckets: readonly number[], p: number, timeoutMs: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const target = p * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i]!;
    if (n > 0 && seen + n >= target) {
      const lo = i === 0 ? 0 : STATS_BUCKETS_MS[i - 1]!;
      const hi = i < STATS_BUCKETS_MS.length ? STATS_BUCKETS_MS[i]! : Math.max(timeoutMs, lo);
      return Math.round(lo + ((target - seen) / n) * (hi - lo));
    }
    seen += n;
  }
  return null;
}

export function periodStats(rows: readonly HourRow[], since: Date, timeoutMs: number): PeriodStats {
  const buckets = new Array<number>(STATS_BUCKETS_MS.length + 1).fill(0);
  let attempts = 0;
  let succeeded = 0;
  for (const r of rows) {
    if (r.hour.getTime() + HOUR_MS <= since.getTime()) continue;
    attempts += r.attempts;
    succeeded += r.succeeded;
    r.latency_buckets.forEach((n, i) => (buckets[i]! += n));
  }
  return {
    attempts,
    succeeded,
    failed: attempts - succeeded,
    success_rate: attempts ? Math.round((succeeded / attempts) * 10_000) / 10_000 : null,
    latency_p50_ms: percentile(buckets, 0.5, timeoutMs),
    latency_p95_ms: percentile(buckets, 0.95, timeoutMs),
  };
}

/** The last 24 hours, hour by hour (missing hours as zeros), oldest first: the chart's bars. */
export function last24Hours(rows: readonly HourRow[], now: Date): Array<{ hour: Date; attempts: number; succeeded: number }> {
  const current = Math.floor(now.getTime() / HOUR_MS);
  const byHour = new Map(rows.map((r) => [Math.floor(r.hour.getTime() / HOUR_MS), r]));
  return Array.from({ length: 24 }, (_, i) => {
    const h = current - 23 + i;
    const r = byHour.get(h);
    return { hour: new Date(h * HOUR_MS), attempts: r?.attempts ?? 0, succeeded: r?.succeeded ?? 0 };
  });
}
