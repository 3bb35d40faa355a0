/**
 * Shared benchmark helpers for the suites in bench/ (customers, checkout, webhooks, links).
 * `npm run bench` runs every suite; `npm run bench -- <name> [<name>…]` runs some.
 *
 * A suite is a file bench/<name>.ts that exports `run(settings: BenchSettings): Promise<void>` and
 * does nothing on import. It typically:
 *
 *   const db = await freshDatabase('checkout');            // payments_bench_checkout, dropped, recreated, migrated
 *   const { key } = await createAccountKey(db.sql, 'test');
 *   …seed through db.sql…
 *   const insertRef = await insertReference(db, settings);  // pgbench, 50 clients, prepared
 *   const svc = await startService({ suite: 'checkout', databaseUrl: db.url });
 *   const r = await load({ url: svc.url, method: 'POST', path: '/v1/…', key, body: {…} }, settings);
 *   await svc.stop();
 *   await writeSection('checkout', markdown);               // merged into bench/RESULTS.md
 *   await db.close();
 *
 * API (kept stable; suites import it from here, the code lives in bench/support/):
 * - `benchSettings()`: { rows, seconds, connections } from BENCH_ROWS (default 1,000,000) and
 *   BENCH_SECONDS (default 10); connections is 50.
 * - `freshDatabase(suite)`: drops and recreates `payments_bench_<suite>` (only that one) on the
 *   server of DATABASE_URL, applies the migrations. Returns { name, url, sql, close() }.
 * - `seededDatabase(suite, tag, seed)`: `freshDatabase(suite)` then `seed(db)` (its answer is `info`); with
 *   BENCH_KEEP_DB=1, the database a previous run kept for the same `tag` instead (migrated to the
 *   current migrations), and `keepDatabase()` tells the suite to leave it in place at the end.
 *   Used by search and reports, whose seeding takes minutes at a million rows.
 * - `createAccountKey(sql, mode?)`: a new account and a secret key: { accountId, key }.
 * - `startService({ suite, databaseUrl, entry?, env?, nodeArgs? })`: runs `node src/main.ts`
 *   (or `src/web.ts`) as a child process with the project's Node, on a free port, under the Redis
 *   prefix `bench_<suite>`, with the default configuration (LOG_LEVEL info), logs going to
 *   bench/out/<suite>-service.log; resolves once /readyz answers 200. Returns
 *   { url, port, pid, logFile, cpuSeconds(), stop() }. `stop()` sends SIGTERM, waits, and removes the prefix's
 *   Redis keys. BENCH_SERVICE_ENV="K=V K2=V2" adds variables for experiments (shown by
 *   `serviceEnvNote()`); BENCH_NODE_ARGS adds node flags (e.g. `--cpu-prof`).
 * - `load(spec, settings)`: autocannon (programmatic) with 50 connections for settings.seconds
 *   after a short unreported warm-up. spec: { url, path, method?, key?, body?, headers?,
 *   idReplacement?, next?(), service?, db? }: `next` is called for each request and may return
 *   { path, body }; with `service` (a started Service) the service's CPU time per request is
 *   measured, with `db` (a BenchDb) that of its Postgres backends. Returns { rps, p50, p99,
 *   non2xx, errors, total, statusCodes, serviceCpuUs, pgCpuUs, clientCpuUs } (latencies in ms,
 *   CPU in µs per answered request; clientCpuUs is autocannon's own).
 * - `pgbench({ databaseUrl, script, seconds, clients?, vars? })`: the pgbench CLI, prepared
 *   mode, 50 clients by default, a custom script; returns { tps, latencyMs, transactions }.
 * - `insertReference(db, settings)`, `selectReference(db, settings)`: the two standard
 *   references: a single-row insert into a scratch table, and a primary-key select on a scratch
 *   table of settings.rows rows.
 * - `writeSection(suite, markdown)`: replaces (or appends) the suite's section of
 *   bench/RESULTS.md, between `<!-- bench:<suite> -->` and `<!-- /bench:<suite> -->`.
 * - Formatting: `table(head, rows)`, `fmtNum(n)`, `fmtMs(n)`, `fmtRatio(a, b)`, `verdict(ok)`,
 *   `environmentNote(sql)`, `serviceEnvNote()`; `say(msg)` prints progress to stderr.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import type postgres from 'postgres';
import { RESULTS_FILE } from './support/base.ts';

export * from './support/base.ts';
export * from './support/service.ts';
export * from './support/load.ts';
export * from './support/pgbench.ts';

// ---------------------------------------------------------------------------------------------
// bench/RESULTS.md

const RESULTS_HEADER = `# Benchmark results

Written by \`npm run bench\` (bench/run.ts). Each suite owns the section between its markers and
rewrites only that section; the numbers depend on the machine and on what else ran on it.
`;

/** Replaces the suite's section of bench/RESULTS.md, or appends it. */
export async function writeSection(suite: string, markdown: string): Promise<void> {
  const start = `<!-- bench:${suite} -->`;
  const end = `<!-- /bench:${suite} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  let current = await readFile(RESULTS_FILE, 'utf8').catch(() => RESULTS_HEADER);
  const i = current.indexOf(start);
  const j = current.indexOf(end);
  if (i >= 0 && j > i) current = current.slice(0, i) + block + current.slice(j + end.length);
  else current = `${current.trimEnd()}\n\n${block}\n`;
  const tmp = `${RESULTS_FILE}.${process.pid}.tmp`;
  await writeFile(tmp, current);
  await rename(tmp, RESULTS_FILE);
}

// ---------------------------------------------------------------------------------------------
// Formatting

export const fmtNum = (n: number): string => Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number): string => `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`;
export const fmtRatio = (a: number, b: number): string => (b > 0 ? (a / b).toFixed(2) : 'n/a');
export const verdict = (ok: boolean): string => (ok ? 'met' : '**missed**');

export function table(head: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Where and when the numbers were taken: they mean little without it. */
export async function environmentNote(sql: postgres.Sql): Promise<string> {
  const [pg] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return (
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC · Node ${process.version} · PostgreSQL ${pg!.v} · ` +
    `${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'} · ${Math.round(os.totalmem() / 2 ** 30)} GB · load average before the run ${load}`
  );
}
