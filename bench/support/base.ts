// The basics every part of the harness shares: settings, paths, logging, the bench database, /proc CPU.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { createAccount, createApiKey, type Mode } from '../../src/auth/keys.ts';
import { migrate } from '../../src/db/migrate.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const OUT_DIR = path.join(ROOT, 'bench', 'out');
export const RESULTS_FILE = path.join(ROOT, 'bench', 'RESULTS.md');

export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/payments';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface BenchSettings {
  rows: number;
  seconds: number;
  connections: number;
}

function positiveInt(name: string, def: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw.replace(/[_,]/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

export function benchSettings(): BenchSettings {
  return { rows: positiveInt('BENCH_ROWS', 1_000_000), seconds: positiveInt('BENCH_SECONDS', 10), connections: 50 };
}

export function say(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BenchDb {
  name: string;
  url: string;
  sql: postgres.Sql;
  close(): Promise<void>;
}

function dbUrl(name: string): string {
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Drops and recreates `payments_bench_<suite>` (never any other database) and migrates it. */
/** A new empty database for a suite, migrated (by this checkout's migrations, or those in `migrationsDir`). */
export async function freshDatabase(suite: string, migrationsDir?: string): Promise<BenchDb> {
  if (!/^[a-z0-9_]+$/.test(suite)) throw new Error(`suite names are lowercase words: ${suite}`);
  const name = `payments_bench_${suite}`;
  const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
  try {
    await admin`drop database if exists ${admin(name)} with (force)`;
    await admin`create database ${admin(name)}`;
  } finally {
    await admin.end();
  }
  const url = dbUrl(name);
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  await migrate(sql, migrationsDir);
  return { name, url, sql, close: () => sql.end({ timeout: 5 }) };
}

/** Whether BENCH_KEEP_DB asks to keep a suite's seeded database between runs (`keptDatabase`). */
export const keepDatabase = (): boolean => process.env.BENCH_KEEP_DB === '1';

/**
 * The seeded database of a suite. Without BENCH_KEEP_DB=1: `freshDatabase(suite)` then `seed`. With it:
 * the database a previous run kept, when it was seeded for the same `tag` (say, the number of rows) and its
 * migrations are still the current ones; otherwise a fresh one, seeded, and remembered (table
 * `bench_kept`). The suite then leaves it in place (`keepDatabase()`), so that iterating on a change
 * costs the measurement, not the seeding (minutes at a million rows).
 */
export async function seededDatabase<T>(suite: string, tag: string, seed: (db: BenchDb) => Promise<T>): Promise<{ db: BenchDb; info: T; reused: boolean }> {
  if (keepDatabase()) {
    const name = `payments_bench_${suite}`;
    const url = dbUrl(name);
    const sql = postgres(url, { max: 4, onnotice: () => {} });
    try {
      const [row] = await sql<{ info: T }[]>`select info from bench_kept where tag = ${tag}`;
      const db: BenchDb = { name, url, sql, close: () => sql.end({ timeout: 5 }) };
      if (row) {
        await migrate(sql);
        say(`${suite}: reusing the kept database ${name} (${tag})`);
        return { db, info: row.info, reused: true };
      }
    } catch {
      // no such database, or not a kept one
    }
    await sql.end({ timeout: 5 });
  }
  const db = await freshDatabase(suite);
  const info = await seed(db);
  if (keepDatabase()) {
    await db.sql`create table bench_kept (tag text primary key, info jsonb not null)`;
    await db.sql`insert into bench_kept ${db.sql({ tag, info: db.sql.json(info as postgres.JSONValue) })}`;
  }
  return { db, info, reused: false };
}

/** Drops a bench database (after a suite, its seeded rows gone with it). */
export async function dropBenchDatabase(name: string): Promise<void> {
  if (!name.startsWith('payments_bench_')) throw new Error(`not a bench database: ${name}`);
  const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
  try {
    await admin`drop database if exists ${admin(name)} with (force)`;
  } finally {
    await admin.end();
  }
}

export async function createAccountKey(sql: postgres.Sql, mode: Mode = 'test'): Promise<{ accountId: string; key: string }> {
  const accountId = await createAccount(sql);
  return { accountId, key: await createApiKey(sql, accountId, mode) };
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function ownCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime
}

/** CPU of a process and its descendants (a clustered web process forks workers). */
export function processCpuSeconds(pid: number): number {
  try {
    let total = ownCpuSeconds(pid);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const kid of kids ? kids.split(' ') : []) total += processCpuSeconds(Number(kid));
    }
    return total;
  } catch {
    return Number.NaN;
  }
}
