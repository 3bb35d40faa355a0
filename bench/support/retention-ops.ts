// The two operations of the retention benchmark that change a database under writes: a day's
// partitions dropped by the retention run, and the conversion migrations (0024 to 0027) of tables
// of the old shape. An inserter writes events, deliveries and attempts all along, as the service
// would, and its latencies show what each step made it wait.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/db/migrate.ts';
import { connect } from '../../src/db/sql.ts';
import { newId } from '../../src/lib/ids.ts';
import { runRetention } from '../../src/retention/service.ts';
import { fmtMs, fmtNum, ROOT, sleep, table, verdict } from '../lib.ts';
import type { PrivateCluster } from './postgres-cluster.ts';
import { writeBulk, writeCore, type Core } from './retention-data.ts';

const DAY = 24 * 3600 * 1000;

interface Sample {
  at: number;
  ms: number;
}

/** Four connections writing an event, its delivery and three attempts per transaction, until stopped. */
function startInserter(url: string, core: Core) {
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  const samples: Sample[] = [];
  const failures: string[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const at = Date.now();
      const t0 = process.hrtime.bigint();
      const ok = await sql.begin(async (tx) => {
        const event = newId('evt');
        const delivery = newId('wd');
        await tx`insert into events (id, account_id, livemode, type, api_version, data) values (${event}, ${core.accountId}, false, 'payment.succeeded', '2026-11-01', '{"object":{}}')`;
        await tx`insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, attempt_count) values (${delivery}, ${core.accountId}, false, ${event}, ${core.endpointId}, 'SUCCEEDED', 3)`;
        await tx`insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code) select ${delivery}, n, now(), 30, 200 from generate_series(1, 3) n`;
      }).then(
        () => true,
        (err: Error) => void failures.push(err.message),
      );
      if (ok) samples.push({ at, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
    }
  };
  const loops = Array.from({ length: 4 }, loop);
  return {
    samples,
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
      await sql.end();
    },
  };
}

const within = (s: Sample[], from: number, to: number) => s.filter((x) => x.at + x.ms >= from && x.at <= to);
const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? 0;

export interface DropResult {
  markdown: string;
}

/** Runs retention at the moment the oldest day of events is 30 days old, with the inserter going. */
export async function measureDrop(url: string, core: Core): Promise<DropResult> {
  const sql = connect(url, 2);
  const logs: Array<{ msg: string; table?: string; partition?: string; ms?: number }> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  try {
    const [oldest] = await sql<{ partition: string; upper_at: Date }[]>`
      select partition, upper_at from table_partitions where parent = 'events' and upper_at is not null order by upper_at limit 1`;
    const day = oldest!.upper_at.getTime() - DAY;
    const suffix = `_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
    const counts: Record<string, number> = {};
    for (const t of ['events', 'webhook_deliveries', 'webhook_attempts']) {
      const [r] = await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${t}${suffix}`);
      counts[t] = r!.n;
    }
    const now = new Date(oldest!.upper_at.getTime() + 30 * DAY + 60_000);
    const inserter = startInserter(url, core);
    await sleep(3000);
    const t0 = Date.now();
    const report = await runRetention({ sql, config: loadConfig({}), log }, now);
    const t1 = Date.now();
    await sleep(2000);
    await inserter.stop();
    const dropped = logs.filter((l) => l.msg === 'retention: partition dropped');
    const ofDay = ['events', 'webhook_deliveries', 'webhook_attempts'].map((t) => dropped.find((l) => l.partition === `${t}${suffix}`));
    const dayMs = ofDay.reduce((a, l) => a + (l?.ms ?? Number.NaN), 0);
    const before = within(inserter.samples, t0 - 3000, t0).map((s) => s.ms);
    const during = within(inserter.samples, t0, t1).map((s) => s.ms);
    const markdown = [
      table(
        ['A day past retention (inserts running)', 'rows', 'drop (ms)', 'Target', 'Result'],
        [
          ...['events', 'webhook_deliveries', 'webhook_attempts'].map((t, i) => [`\`${t}${suffix}\``, fmtNum(counts[t]!), String(ofDay[i]?.ms ?? 'not dropped'), '', '']),
          ['the day, three tables', fmtNum(Object.values(counts).reduce((a, b) => a + b, 0)), String(dayMs), '< 1,000 ms', verdict(dayMs < 1000)],
          [`the whole run (${report.dropped.length} partitions dropped, ${report.created.length} made ahead)`, '', String(t1 - t0), '', ''],
        ],
      ),
      '',
      `Inserts (4 connections, an event, its delivery and three attempts per transaction): ${fmtNum(before.length / 3)}/s before the run, p99 ${fmtMs(p99(before))}, ` +
        `longest ${fmtMs(max(before))}; during the run ${fmtNum(during.length)} transactions, p99 ${fmtMs(p99(during))}, longest ${fmtMs(max(during))}; ` +
        `failed transactions: ${inserter.failures.length}.`,
    ].join('\n');
    return { markdown };
  } finally {
    await sql.end();
  }
}

export interface MigrationResult {
  markdown: string;
}

/** A folder holding the migrations numbered up to `last`. */
function migrationsUpTo(last: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-migrations-'));
  const src = path.join(ROOT, 'migrations');
  for (const f of readdirSync(src)) if (/^\d{4}_/.test(f) && Number(f.slice(0, 4)) <= last) cpSync(path.join(src, f), path.join(dir, f));
  return dir;
}

/** The conversion migrations (0024 to 0027), each timed, on `events` events (and their deliveries and attempts) of the old shape. */
export async function measureMigration(cluster: PrivateCluster, events: number, progress: (m: string) => void): Promise<MigrationResult> {
  const admin = postgres(cluster.url('postgres'), { max: 1, onnotice: () => {} });
  await admin`drop database if exists bench_migration with (force)`;
  await admin`create database bench_migration`;
  const sql = postgres(cluster.url('bench_migration'), { max: 2, onnotice: () => {} });
  const dirs = [23, 24, 25, 26, 27].map(migrationsUpTo);
  try {
    await migrate(sql, dirs[0]);
    const now = Date.now();
    const core = await writeCore(sql, now);
    progress(`migration: writing ${events.toLocaleString('en-US')} events of the old shape`);
    await writeBulk(sql, events, now, core, (m) => progress(`migration: ${m}`));
    await sql`vacuum (analyze) events, webhook_deliveries, webhook_attempts`;
    const inserter = startInserter(cluster.url('bench_migration'), core);
    await sleep(2000);
    const steps: Array<[string, number, number]> = [];
    for (const [i, name] of ['0024 (CHECK … NOT VALID)', '0025 (VALIDATE)', '0026 (the swap)', '0027 (partitions ahead)'].entries()) {
      const t0 = Date.now();
      await migrate(sql, dirs[i + 1]);
      steps.push([name, t0, Date.now()]);
      await sleep(1000);
    }
    await inserter.stop();
    const markdown = [
      table(
        [`Conversion of ${fmtNum(events)} events, ${fmtNum(events)} deliveries, ${fmtNum(3 * events)} attempts (inserts running)`, 'took', 'longest insert during it', 'Result'],
        steps.map(([name, t0, t1]) => {
          const waited = max(within(inserter.samples, t0, t1).map((s) => s.ms));
          // The only step allowed to hold writers is the swap, and only for a moment.
          return [name, fmtMs(t1 - t0), fmtMs(waited), name.startsWith('0025') ? verdict(waited < 1000) : ''];
        }),
      ),
      '',
      `Inserts during the conversion: ${fmtNum(inserter.samples.length)} transactions, ${inserter.failures.length} failed${inserter.failures.length ? ` (${[...new Set(inserter.failures)].join('; ')})` : ''}.`,
    ].join('\n');
    return { markdown };
  } finally {
    await sql.end();
    await admin`drop database if exists bench_migration with (force)`;
    await admin.end();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
