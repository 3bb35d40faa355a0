import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Response } from 'express';
import type { Sql } from '../db/sql.ts';
import type { Logger } from '../lib/logger.ts';
import type { Owner } from '../lib/owner.ts';
import type { Services } from '../services.ts';
import type { Dataset } from './columns.ts';
import { enqueueRun, EXPORT_MAX_ATTEMPTS, revive } from './jobs.ts';
import type { ExportQuery } from './schema.ts';
import { writeExport } from './service.ts';
import * as store from './store.ts';

/** A stored file is cut into chunks of about this size (one row of export_chunks each). */
export const CHUNK_BYTES = 1024 * 1024;

/** A run younger than this is left to its after-commit enqueue by the reconciler. */
export const RECONCILE_RUNS_AFTER_MS = 30_000;
const RECONCILE_BATCH = 100;

const DAY_MS = 24 * 3600 * 1000;

/** Creates an export run and enqueues its job after the insert; a lost enqueue is the reconciler's. */
export async function createExportRun(s: Services, log: Logger, o: Owner, d: Dataset, q: ExportQuery): Promise<store.ExportRunRow> {
  const row = await store.insertRun(s.sql, o, d, q, s.config.exports.retentionDays * DAY_MS);
  await enqueueRun(s, row.id).catch((err: unknown) => log.warn({ err, exportRun: row.id }, 'export run not enqueued; the reconciler enqueues it'));
  return row;
}

class Superseded extends Error {}

/**
 * A Writable that stores what is written to it as chunks of the attempt `token`, one insert per
 * CHUNK_BYTES: memory holds at most one chunk and what writeExport waits to write. An insert that
 * finds the attempt superseded (another worker took the run over) fails the stream.
 */
function chunkSink(sql: Sql, id: string, token: string) {
  let pending: Buffer[] = [];
  let size = 0;
  let seq = 0;
  let bytes = 0;
  let failure: Error | undefined;
  const flush = async () => {
    if (!size) return;
    const data = Buffer.concat(pending, size);
    pending = [];
    size = 0;
    if (!(await store.insertChunk(sql, id, token, seq++, data))) throw new Superseded('the export run was taken over by another attempt');
    bytes += data.length;
  };
  const sink = new Writable({
    highWaterMark: CHUNK_BYTES,
    write(chunk: Buffer, _enc, done) {
      pending.push(chunk);
      size += chunk.length;
      if (size < CHUNK_BYTES) return done();
      flush().then(() => done(), done);
    },
    final(done) {
      flush().then(() => done(), done);
    },
  });
  // The failure is read by the job (a superseded attempt ends quietly); the writer sees the stream destroyed.
  sink.on('error', (err) => (failure = err));
  return { sink, bytes: () => bytes, failure: () => failure };
}

/**
 * The job of an export run (jobId = run id): a new attempt writes the whole file again from the
 * start, so a job run twice, or once more after a worker was killed mid-file, leaves one whole
 * file: chunks carry their attempt's token, and only the attempt that is still the run's current
 * one may store a chunk or finish. A run already finished is left alone.
 */
export async function runExportJob(s: Services, id: string): Promise<{ rows: number; bytes: number } | { skipped: string }> {
  const token = randomBytes(12).toString('hex');
  const run = await store.startAttempt(s.sql, id, token);
  if (!run) return { skipped: 'finished or gone' };
  const log = s.log.child({ exportRun: id, dataset: run.dataset, attempt: run.attempts });
  const { sink, bytes, failure } = chunkSink(s.sql, id, token);
  try {
    await store.deleteOtherChunks(s.sql, id, token);
    const rows = await writeExport(s.sql, { accountId: run.account_id, livemode: run.livemode }, run.dataset, run.filters, sink);
    sink.end();
    await finished(sink);
    if (!(await store.finishRun(s.sql, id, token, rows, bytes()))) return { skipped: 'superseded' };
    await store.deleteOtherChunks(s.sql, id, token);
    s.metrics.exportRows.inc({ dataset: run.dataset, source: 'run' }, rows);
    s.metrics.exportRuns.inc({ dataset: run.dataset, outcome: 'succeeded' });
    log.info({ rows, bytes: bytes() }, 'export run written');
    return { rows, bytes: bytes() };
  } catch (thrown) {
    const err = failure() ?? thrown;
    if (err instanceof Superseded) {
      log.info('export attempt superseded by a newer one');
      return { skipped: 'superseded' };
    }
    sink.destroy();
    if (run.attempts >= EXPORT_MAX_ATTEMPTS) {
      if (await store.failRun(s.sql, id, (err as Error).message)) s.metrics.exportRuns.inc({ dataset: run.dataset, outcome: 'failed' });
      log.error({ err }, 'export run failed for good');
      return { skipped: 'failed' };
    }
    throw err; // retried by BullMQ (backoff), the next attempt starts over
  }
}

/**
 * Repair pass: every unfinished run without a live job gets one again (Redis flushed, the enqueue
 * lost, a job failed by the stall limit after its worker was killed); one that has used all its
 * attempts is FAILED instead. Returns how many were repaired.
 */
export async function reconcileExports(s: Services): Promise<number> {
  const before = new Date(Date.now() - RECONCILE_RUNS_AFTER_MS);
  let after = '';
  let repaired = 0;
  for (;;) {
    const runs = await store.unfinishedRuns(s.sql, before, after, RECONCILE_BATCH);
    if (runs.length === 0) break;
    const spent = new Set(runs.filter((r) => r.attempts >= EXPORT_MAX_ATTEMPTS).map((r) => r.id));
    const dead = await revive(s, runs.map((r) => r.id), async (ids) => {
      const left = await store.stillUnfinished(s.sql, ids);
      for (const id of left.filter((i) => spent.has(i))) await store.failRun(s.sql, id, 'the export stopped (its worker was stopped) on every attempt');
      return left.filter((i) => !spent.has(i));
    });
    if (dead.length) s.log.warn({ reconciler: 'exports', count: dead.length }, 'export runs without a job were enqueued again');
    repaired += dead.length;
    after = runs[runs.length - 1]!.id;
    if (runs.length < RECONCILE_BATCH) break;
  }
  return repaired;
}

/**
 * Sends the stored file of a SUCCEEDED run, chunk by chunk (each its own short query, waiting for
 * the reader between two), with its length, so that a download cut short (the run deleted
 * meanwhile, Postgres gone) is seen as incomplete.
 */
export async function sendStoredExport(s: Services, log: Logger, res: Response, run: store.ExportRunRow, fileName: string): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.setHeader('Content-Length', String(run.byte_count));
  res.setHeader('Cache-Control', 'no-store');
  let sent = 0;
  try {
    for (let seq = 0; ; seq++) {
      const data = await store.chunkAt(s.sql, run.id, run.run_token!, seq);
      if (!data) break;
      if (res.destroyed) throw new Error('the reader went away');
      sent += data.length;
      if (!res.write(data)) await once(res, 'drain');
    }
    s.metrics.exportDownloadBytes.inc(sent);
    if (sent !== Number(run.byte_count)) throw new Error(`the stored file ended after ${sent} of ${run.byte_count} bytes`);
    res.end();
  } catch (err) {
    if (!res.headersSent) throw err;
    log.warn({ err, exportRun: run.id }, 'export download cut short');
    res.destroy();
  }
}

/** Retention: deletes the runs (and their files) past their expiry, in batches; answers how many. */
export async function deleteExpiredExportRuns(sql: Sql, now: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await store.deleteExpiredRuns(sql, now, 100);
    deleted += n;
    if (n < 100) return deleted;
  }
}
