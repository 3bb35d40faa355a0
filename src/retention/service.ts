import type { Config } from '../config.ts';
import type { Sql } from '../db/sql.ts';
import { KEY_TTL_MS } from '../idempotency/store.ts';
import { deleteExpiredExportRuns } from '../exports/run.ts';
import type { Logger } from '../lib/logger.ts';
import { createPartitions, dropPartition, partitionsOf, tryLockTable } from './store.ts';

const DAY_MS = 24 * 3600 * 1000;

/**
 * How long DDL of a run waits for its lock on a parent table. Dropping a partition takes ACCESS
 * EXCLUSIVE on the parent for a moment; while it waits behind a long transaction, the statements
 * that come after it wait too, so it gives up after this and the next run tries again.
 */
export const DDL_LOCK_TIMEOUT = '1s';

/** A table partitioned by time (migration 0024) and how long its rows are kept. */
export interface RetainedTable {
  name: string;
  keepMs: number;
}

/**
 * Every bounded table and its retention. Attempts before their deliveries (they share the bounds),
 * so no attempt outlives its delivery. Money records (payments, refunds, disputes, invoices, plans)
 * and every other table are not partitioned and never dropped.
 */
export function retainedTables(c: Config['retention']): RetainedTable[] {
  return [
    { name: 'events', keepMs: c.eventsDays * DAY_MS },
    { name: 'webhook_attempts', keepMs: c.webhookDeliveriesDays * DAY_MS },
    { name: 'webhook_deliveries', keepMs: c.webhookDeliveriesDays * DAY_MS },
    { name: 'emails', keepMs: c.emailsDays * DAY_MS },
    { name: 'processor_events', keepMs: c.processorEventsDays * DAY_MS },
    // A key is answered for KEY_TTL and claimable again after it: keeping it longer serves nothing.
    { name: 'idempotency_keys', keepMs: KEY_TTL_MS },
  ];
}

export interface RetentionReport {
  /** Partitions made ahead. */
  created: string[];
  /** Partitions dropped past retention. */
  dropped: string[];
  /** Tables another run was working on (it does the same work). */
  busy: string[];
  /** Partitions due to go whose drop gave up waiting for the table's lock (a long transaction): the next run drops them. */
  deferred: string[];
  /** Export runs deleted with their files, past EXPORT_RETENTION_DAYS (not partitioned: few rows, large ones). */
  exportRuns?: number;
}

interface RetentionDeps {
  sql: Sql;
  config: Pick<Config, 'retention'>;
  log: Logger;
  /** Counts the partitions dropped (retention_partitions_dropped_total); absent in the benchmark. */
  metrics?: { partitionsDropped: { inc(labels: { table: string }): void } };
}

const isLockTimeout = (err: unknown) => (err as { code?: string }).code === '55P03';

/**
 * The partitions of every bounded table from `now` to RETENTION_PARTITIONS_AHEAD_DAYS ahead, made
 * when missing: at every start-up and by every retention run, so that an insert finds its partition
 * even when the retention job has not run for days.
 */
export async function ensurePartitions(d: RetentionDeps, now: Date): Promise<RetentionReport> {
  const report: RetentionReport = { created: [], dropped: [], busy: [], deferred: [] };
  const until = new Date(now.getTime() + d.config.retention.partitionsAheadDays * DAY_MS);
  for (const t of retainedTables(d.config.retention)) {
    const created = await d.sql.begin(async (tx) => {
      await tx`select set_config('lock_timeout', ${DDL_LOCK_TIMEOUT}, true)`;
      if (!(await tryLockTable(tx, t.name))) return null;
      return createPartitions(tx, t.name, now, until);
    });
    if (created === null) report.busy.push(t.name);
    else report.created.push(...created);
  }
  if (report.created.length) d.log.info({ created: report.created }, 'retention: partitions made ahead');
  return report;
}

/**
 * One retention run (the `retention` job of the maintenance queue, hourly), at `now` (injected by
 * tests): makes the partitions ahead, then drops every partition whose whole range is older than
 * its table's retention, one short transaction per partition. Idempotent, and safe with several
 * workers: each table's work happens under its retention lock, which another run finds taken and
 * leaves (`busy`). A Postgres outage fails the run (the job is retried); a drop that cannot get its
 * lock in time waits for the next run (`deferred`).
 */
export async function runRetention(d: RetentionDeps, now: Date): Promise<RetentionReport> {
  const report = await ensurePartitions(d, now);
  for (const t of retainedTables(d.config.retention)) {
    const horizon = now.getTime() - t.keepMs;
    const expired = (await partitionsOf(d.sql, t.name)).filter((p) => p.upperAt !== null && p.upperAt.getTime() <= horizon);
    for (const [i, p] of expired.entries()) {
      const started = Date.now();
      let outcome: 'dropped' | 'gone' | 'busy';
      try {
        outcome = await d.sql.begin(async (tx) => {
          await tx`select set_config('lock_timeout', ${DDL_LOCK_TIMEOUT}, true)`;
          if (!(await tryLockTable(tx, t.name))) return 'busy';
          return (await dropPartition(tx, t.name, p.partition)) ? 'dropped' : 'gone';
        });
      } catch (err) {
        if (!isLockTimeout(err)) throw err;
        // The next drop of this table would wait for the same lock: they all wait for the next run.
        const later = expired.slice(i).map((x) => x.partition);
        d.log.warn({ table: t.name, partitions: later, lockTimeout: DDL_LOCK_TIMEOUT }, 'retention: dropping waited too long for the table\'s lock; the next run drops them');
        report.deferred.push(...later);
        break;
      }
      if (outcome === 'busy') {
        if (!report.busy.includes(t.name)) report.busy.push(t.name);
        break;
      }
      if (outcome === 'dropped') {
        report.dropped.push(p.partition);
        d.metrics?.partitionsDropped.inc({ table: t.name });
        d.log.info({ table: t.name, partition: p.partition, upTo: p.upperAt, ms: Date.now() - started }, 'retention: partition dropped');
      }
    }
  }
  // Each run's expiry was set at its creation (EXPORT_RETENTION_DAYS): its row and file chunks go together.
  report.exportRuns = await deleteExpiredExportRuns(d.sql, now);
  if (report.exportRuns) d.log.info({ count: report.exportRuns }, 'retention: export runs deleted');
  return report;
}
