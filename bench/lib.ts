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
 * API (kept stable):
 * - `benchSettings()`: { rows, seconds, connections } from BENCH_ROWS (default 1,000,000) and
 *   BENCH_SECONDS (default 10); connections is 50.
 * - `freshDatabase(suite)`: drops and recreates `payments_bench_<suite>` (only that one) on the
 *   server of DATABASE_URL, applies the migrations. Returns { name, url, sql, close() }.
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
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { createAccount, createApiKey, type Mode } from '../src/auth/keys.ts';
import { migrate } from '../src/db/migrate.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const OUT_DIR = path.join(ROOT, 'bench', 'out');
export const RESULTS_FILE = path.join(ROOT, 'bench', 'RESULTS.md');

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/payments';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

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

// ---------------------------------------------------------------------------------------------
// Database

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
export async function freshDatabase(suite: string): Promise<BenchDb> {
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
  await migrate(sql);
  return { name, url, sql, close: () => sql.end({ timeout: 5 }) };
}

export async function createAccountKey(sql: postgres.Sql, mode: Mode = 'test'): Promise<{ accountId: string; key: string }> {
  const accountId = await createAccount(sql);
  return { accountId, key: await createApiKey(sql, accountId, mode) };
}

// ---------------------------------------------------------------------------------------------
// The service, as a child process

export interface Service {
  url: string;
  port: number;
  pid: number;
  logFile: string;
  /** CPU seconds (user + system) the service process has used so far; NaN where /proc is missing. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  suite: string;
  databaseUrl: string;
  /** `main` (npm start: web and workers in one process, the default) or `web` (npm run start:web). */
  entry?: 'main' | 'web';
  env?: Record<string, string>;
  nodeArgs?: string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function parseAssignments(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(/\s+/).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}

/** Variables set through BENCH_SERVICE_ENV for an experiment; empty for a real run. */
export function serviceEnvNote(): string {
  const extra = parseAssignments(process.env.BENCH_SERVICE_ENV);
  const keys = Object.keys(extra);
  return keys.length ? `**Not the default configuration:** ${keys.map((k) => `${k}=${extra[k]}`).join(' ')}` : '';
}

// Variables that would change the service's configuration away from its defaults.
const CONFIG_OVERRIDES = ['LOG_LEVEL', 'DB_POOL_MAX', 'API_KEY_CACHE_SECONDS', 'WEB_CONCURRENCY', 'PUBLIC_BASE_URL', 'CHECKOUT_URL', 'PUBLIC_LINK_URL', 'NODE_OPTIONS'];

async function clearRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function ownCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime
}

/** CPU of a process and its descendants (a clustered web process forks workers). */
function processCpuSeconds(pid: number): number {
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Starts the service as its own process (the project's Node), and waits for /readyz. */
export async function startService(o: ServiceOptions): Promise<Service> {
  const port = await freePort();
  const prefix = `bench_${o.suite}`;
  await clearRedisPrefix(prefix);
  mkdirSync(OUT_DIR, { recursive: true });
  const logFile = path.join(OUT_DIR, `${o.suite}-service.log`);
  const fd = openSync(logFile, 'w');
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of CONFIG_OVERRIDES) delete env[k];
  Object.assign(env, {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    PORT: String(port),
    LOG_LEVEL: 'info',
    ...parseAssignments(process.env.BENCH_SERVICE_ENV),
    ...o.env,
  });
  const nodeArgs = [...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean), ...(o.nodeArgs ?? [])];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, `src/${o.entry ?? 'main'}.ts`], {
    cwd: ROOT,
    env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? (signal ? -1 : null);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`the service exited (${exited}) before it was ready:\n${tail(logFile)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not ready within 60 s:\n${tail(logFile)}`);
    }
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    await sleep(100);
  }
  return {
    url,
    port,
    pid: child.pid!,
    logFile,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    async stop() {
      if (exited === undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exit;
        clearTimeout(timer);
      }
      await clearRedisPrefix(prefix);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP load (autocannon)

export interface LoadSpec {
  url: string;
  path: string;
  method?: string;
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** An object is sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Replaces `[<id>]` in the body with a fresh random id per request (autocannon's feature). */
  idReplacement?: boolean;
  /** Called before each request; what it returns replaces that request's path and/or body. */
  next?: () => { path?: string; body?: string };
  /** Seconds of unreported load first (JIT, pools). Default: min(3, seconds). */
  warmupSeconds?: number;
  /** The service under load: its CPU time per request is then reported. */
  service?: Pick<Service, 'cpuSeconds'>;
  /** The service's database: the CPU its Postgres backends use per request is then reported. */
  db?: Pick<BenchDb, 'name' | 'sql'>;
}

export interface LoadResult {
  /** Mean requests per second over the run. */
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  total: number;
  statusCodes: Record<string, number>;
  /** CPU microseconds the service process used per answered request (when spec.service is given). */
  serviceCpuUs: number | undefined;
  /** CPU microseconds the Postgres backends of spec.db used per answered request. */
  pgCpuUs: number | undefined;
  /** CPU microseconds the load generator (autocannon, this process) used per answered request. */
  clientCpuUs: number;
}

async function cannon(spec: LoadSpec, seconds: number, connections: number): Promise<LoadResult> {
  const headers: Record<string, string> = { ...spec.headers };
  if (spec.key) headers.authorization = `Bearer ${spec.key}`;
  let body: string | undefined;
  if (spec.body !== undefined) {
    body = typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body);
    headers['content-type'] ??= 'application/json';
  }
  const next = spec.next;
  const r = await autocannon({
    url: spec.url,
    connections,
    duration: seconds,
    idReplacement: spec.idReplacement ?? false,
    requests: [
      {
        method: spec.method ?? 'GET',
        path: spec.path,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(next ? { setupRequest: (req) => ({ ...req, ...next() }) } : {}),
      },
    ],
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(v.count);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r.requests.total,
    statusCodes,
    serviceCpuUs: undefined,
    pgCpuUs: undefined,
    clientCpuUs: Number.NaN,
  };
}

/** CPU seconds used so far by the Postgres backends connected to one database (Linux /proc). */
async function backendsCpu(db: Pick<BenchDb, 'name' | 'sql'>): Promise<Map<number, number>> {
  const rows = await db.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`;
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const cpu = processCpuSeconds(pid);
    if (!Number.isNaN(cpu)) out.set(pid, cpu);
  }
  return out;
}

/** autocannon with settings.connections (50) for settings.seconds, after an unreported warm-up. */
export async function load(spec: LoadSpec, settings: BenchSettings): Promise<LoadResult> {
  const warm = spec.warmupSeconds ?? Math.min(3, settings.seconds);
  if (warm > 0) await cannon(spec, warm, settings.connections);
  const svc0 = spec.service?.cpuSeconds();
  const pg0 = spec.db ? await backendsCpu(spec.db) : undefined;
  const me0 = process.cpuUsage();
  const r = await cannon(spec, settings.seconds, settings.connections);
  const me = process.cpuUsage(me0);
  const per = (seconds: number) => (r.total > 0 ? (seconds * 1e6) / r.total : Number.NaN);
  r.clientCpuUs = per((me.user + me.system) / 1e6);
  if (svc0 !== undefined) r.serviceCpuUs = per(spec.service!.cpuSeconds() - svc0);
  if (pg0 !== undefined) {
    let used = 0;
    for (const [pid, cpu] of await backendsCpu(spec.db!)) used += cpu - (pg0.get(pid) ?? 0);
    r.pgCpuUs = per(used);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// pgbench

export interface PgbenchOptions {
  databaseUrl: string;
  /** A pgbench custom script (`\set`, SQL ending in `;`). */
  script: string;
  seconds: number;
  clients?: number;
  /** `-D name=value` variables for the script. */
  vars?: Record<string, string | number>;
}

export interface PgbenchResult {
  tps: number;
  latencyMs: number;
  transactions: number;
}

/** The pgbench CLI in prepared mode, 50 clients by default, no vacuum (-n), on a custom script. */
export async function pgbench(o: PgbenchOptions): Promise<PgbenchResult> {
  mkdirSync(OUT_DIR, { recursive: true });
  const scriptFile = path.join(OUT_DIR, `pgbench-${process.pid}-${Date.now()}.sql`);
  await writeFile(scriptFile, o.script);
  const u = new URL(o.databaseUrl);
  const clients = o.clients ?? 50;
  const args = [
    '-n', '-M', 'prepared',
    '-c', String(clients), '-j', String(Math.min(clients, Math.max(1, os.availableParallelism()))),
    '-T', String(o.seconds),
    '-f', scriptFile,
    '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'),
    ...Object.entries(o.vars ?? {}).flatMap(([k, v]) => ['-D', `${k}=${v}`]),
    decodeURIComponent(u.pathname.slice(1)),
  ];
  const env = { ...process.env, ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) };
  const once = () =>
    new Promise<string>((resolve, reject) => {
      execFile('pgbench', args, { env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`pgbench failed: ${err.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
  let out: string;
  // The server is shared (max_connections): when others hold too many connections, wait and retry.
  for (let attempt = 1; ; attempt++) {
    try {
      out = await once();
      break;
    } catch (err) {
      if (attempt >= 6 || !/too many clients/.test((err as Error).message)) throw err;
      say(`pgbench: the server has too many clients; retrying in 10 s (${attempt}/5)`);
      await sleep(10_000);
    }
  }
  const num = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`unexpected pgbench output:\n${out}`);
    return Number(m[1]);
  };
  return {
    tps: num(/tps = ([\d.]+)/),
    latencyMs: num(/latency average = ([\d.]+) ms/),
    transactions: num(/number of transactions actually processed: (\d+)/),
  };
}

/** Reference: a single-row insert into a scratch table with a primary key (what Postgres itself can do). */
export async function insertReference(db: BenchDb, settings: BenchSettings): Promise<PgbenchResult> {
  await db.sql`drop table if exists bench_ref_insert`;
  await db.sql`create table bench_ref_insert (
    id bigint generated by default as identity primary key,
    email text not null,
    created_at timestamptz not null default now()
  )`;
  return pgbench({
    databaseUrl: db.url,
    script: `insert into bench_ref_insert (email) values ('ref' || :client_id || '@example.com');\n`,
    seconds: settings.seconds,
    clients: settings.connections,
  });
}

/** Reference: a primary-key select of a random row of a scratch table of settings.rows rows. */
export async function selectReference(db: BenchDb, settings: BenchSettings): Promise<PgbenchResult> {
  await db.sql`drop table if exists bench_ref_select`;
  await db.sql`create table bench_ref_select (id bigint primary key, email text not null, created_at timestamptz not null)`;
  await db.sql`
    insert into bench_ref_select (id, email, created_at)
    select g, 'ref' || g || '@example.com', now() from generate_series(1, ${settings.rows}::bigint) g`;
  await db.sql`vacuum analyze bench_ref_select`;
  return pgbench({
    databaseUrl: db.url,
    script: `\\set id random(1, :rows)\nselect * from bench_ref_select where id = :id;\n`,
    seconds: settings.seconds,
    clients: settings.connections,
    vars: { rows: settings.rows },
  });
}

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
