import { randomBytes } from 'node:crypto';
import type { Db } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';
import type { Dataset } from './columns.ts';
import type { ExportQuery } from './schema.ts';

// Export runs (migration 0041): one row per long export, its CSV in chunks of the current attempt.

export type RunStatus = 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

export interface ExportRunRow {
  id: string;
  account_id: string;
  livemode: boolean;
  dataset: Dataset;
  filters: ExportQuery;
  status: RunStatus;
  run_token: string | null;
  attempts: number;
  row_count: number | null;
  byte_count: number | null;
  failure_message: string | null;
  link_key: Buffer;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  expires_at: Date;
}

export async function insertRun(db: Db, o: Owner, d: Dataset, q: ExportQuery, keepMs: number): Promise<ExportRunRow> {
  const [row] = await db<ExportRunRow[]>`
    insert into export_runs (id, account_id, livemode, dataset, filters, link_key, expires_at)
    values (${newId('exr')}, ${o.accountId}, ${o.livemode}, ${d}, ${db.json(q)}, ${randomBytes(32)}, now() + ${`${keepMs} milliseconds`}::interval)
    returning *`;
  return row!;
}

export async function findRun(db: Db, o: Owner, id: string): Promise<ExportRunRow | null> {
  const [row] = await db<ExportRunRow[]>`select * from export_runs where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row ?? null;
}

/** Any owner's run: the signed link and the job carry the id only (the link's signature binds it). */
export async function runById(db: Db, id: string): Promise<ExportRunRow | null> {
  const [row] = await db<ExportRunRow[]>`select * from export_runs where id = ${id}`;
  return row ?? null;
}

/** The owner's newest runs (the dashboard's list). */
export async function recentRuns(db: Db, o: Owner, limit: number): Promise<ExportRunRow[]> {
  return db<ExportRunRow[]>`
    select * from export_runs where account_id = ${o.accountId} and livemode = ${o.livemode}
    order by id desc limit ${limit}`;
}

/**
 * Starts an attempt: a fresh token, the attempt counted. Null when the run is finished (a job run
 * again after its end) or gone (expired): nothing to do.
 */
export async function startAttempt(db: Db, id: string, token: string): Promise<ExportRunRow | null> {
  const [row] = await db<ExportRunRow[]>`
    update export_runs set status = 'RUNNING', run_token = ${token}, attempts = attempts + 1, started_at = now()
    where id = ${id} and status in ('PENDING', 'RUNNING') returning *`;
  return row ?? null;
}

/** Chunks of other attempts (a killed worker's, a stalled one's): never read, deleted. */
export async function deleteOtherChunks(db: Db, id: string, token: string): Promise<void> {
  await db`delete from export_chunks where export_run_id = ${id} and run_token <> ${token}`;
}

/** Stores a chunk of the attempt `token`; false when the attempt is no longer the run's current one (superseded). */
export async function insertChunk(db: Db, id: string, token: string, seq: number, data: Buffer): Promise<boolean> {
  const rows = await db`
    insert into export_chunks (export_run_id, run_token, seq, data)
    select ${id}, ${token}, ${seq}, ${data}
    where exists (select 1 from export_runs where id = ${id} and run_token = ${token} and status = 'RUNNING')`;
  return rows.count === 1;
}

/** Ends the attempt `token` as a success; false when it was superseded. */
export async function finishRun(db: Db, id: string, token: string, rowCount: number, byteCount: number): Promise<boolean> {
  const rows = await db`
    update export_runs set status = 'SUCCEEDED', row_count = ${rowCount}, byte_count = ${byteCount}, completed_at = now()
    where id = ${id} and run_token = ${token} and status = 'RUNNING'`;
  return rows.count === 1;
}

/** Ends a run as failed (its last attempt failed, or it ran out of attempts); its chunks go. */
export async function failRun(db: Db, id: string, message: string): Promise<boolean> {
  const rows = await db`
    update export_runs set status = 'FAILED', failure_message = ${message.slice(0, 500)}, completed_at = now()
    where id = ${id} and status in ('PENDING', 'RUNNING')`;
  await db`delete from export_chunks where export_run_id = ${id}`;
  return rows.count === 1;
}

/** One chunk of the run's file (the attempt `token`), or null past the last. */
export async function chunkAt(db: Db, id: string, token: string, seq: number): Promise<Buffer | null> {
  const [row] = await db<{ data: Buffer }[]>`select data from export_chunks where export_run_id = ${id} and run_token = ${token} and seq = ${seq}`;
  return row?.data ?? null;
}

/** Unfinished runs created before `before`, by id after `after` (the reconciler's pages). */
export async function unfinishedRuns(db: Db, before: Date, after: string, limit: number): Promise<Array<Pick<ExportRunRow, 'id' | 'attempts'>>> {
  return db<Pick<ExportRunRow, 'id' | 'attempts'>[]>`
    select id, attempts from export_runs
    where status in ('PENDING', 'RUNNING') and created_at < ${before} and id > ${after}
    order by id limit ${limit}`;
}

/** Of `ids`, those still unfinished. */
export async function stillUnfinished(db: Db, ids: readonly string[]): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from export_runs where id = any(${ids as string[]}) and status in ('PENDING', 'RUNNING')`;
  return rows.map((r) => r.id);
}

/** Deletes up to `limit` runs past their expiry, with their chunks; answers how many. */
export async function deleteExpiredRuns(db: Db, now: Date, limit: number): Promise<number> {
  const rows = await db`
    delete from export_runs where id in (select id from export_runs where expires_at <= ${now} order by expires_at limit ${limit})`;
  return rows.count;
}
