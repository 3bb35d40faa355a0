// The retention benchmark (issue 23, point 2): the reads the service makes on its bounded tables,
// on a database of 10 million events, 10 million deliveries and 30 million attempts (written with
// COPY, spread over 30 days of daily partitions), against the same reads on a database holding only
// the rows they return ("empty"): within 1.25 × is the target. Then a day's drop, while inserts run:
// under a second is the target. And the conversion migrations on a table of the old shape.
// Both databases live in a private PostgreSQL cluster (bench/support/postgres-cluster.ts): tens of
// gigabytes stay off the shared server. Measurements of the two databases are interleaved, so a
// burst of load from the other users of the machine falls on both.
//
// Sizes: BENCH_RETENTION_EVENTS (default 10,000,000), BENCH_RETENTION_ROUNDS (8) of
// BENCH_RETENTION_ITERATIONS (40) calls per database and measurement, BENCH_RETENTION_MIGRATION_EVENTS
// (1,000,000; 0: skip). BENCH_RETENTION_DIR keeps the cluster there (and reuses the data it holds).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { findEvent, listEvents } from '../src/events/store.ts';
import { closeServices, createServices } from '../src/compose.ts';
import type { Services } from '../src/services.ts';
import { reconcileDeliveries } from '../src/webhooks/deliver.ts';
import { loadAttemptContexts } from '../src/webhooks/deliveries.ts';
import { eventDeliveries, resendEvent } from '../src/webhooks/service.ts';
import { listEndpoints } from '../src/webhooks/store.ts';
import { MAX_ENDPOINTS } from '../src/webhooks/schema.ts';
import { environmentNote, fmtMs, fmtNum, OUT_DIR, REDIS_URL, say, table, verdict, writeSection } from './lib.ts';
import { startPrivateCluster, type PrivateCluster } from './support/postgres-cluster.ts';
import { writeBulk, writeCore, type BulkTimes, type Core } from './support/retention-data.ts';
import { measureDrop, measureMigration, type DropResult, type MigrationResult } from './support/retention-ops.ts';
import { clearRedisPrefix } from './support/service.ts';

const DAY = 24 * 3600 * 1000;
const TARGET_RATIO = 1.25;
const intEnv = (name: string, def: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const v = Number(raw.replace(/[_,]/g, ''));
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a whole number, got ${raw}`);
  return v;
};

interface Meta {
  now: number;
  core: Core;
  events: number;
  bulk: BulkTimes | null;
  vacuumSeconds: number;
}

interface Side {
  name: 'empty' | 'large';
  s: Services;
  meta: Meta;
}

/** Creates and fills one database, or answers what an earlier run recorded in it. */
async function prepare(cluster: PrivateCluster, db: string, events: number): Promise<Meta> {
  const admin = postgres(cluster.url('postgres'), { max: 1, onnotice: () => {} });
  const [exists] = await admin`select 1 from pg_database where datname = ${db}`;
  if (!exists) await admin`create database ${admin(db)}`;
  await admin.end();
  const sql = postgres(cluster.url(db), { max: 2, onnotice: () => {} });
  try {
    const [kept] = exists ? await sql`select v from bench_meta where k = 'meta'`.catch(() => []) : [];
    if (kept) return kept.v as Meta;
    await migrate(sql);
    const now = Date.now();
    // Daily partitions over the whole window (a fresh database starts them a week back).
    const start = Math.floor((now - 30 * DAY) / DAY) * DAY;
    await sql`update partitioned_tables set partitions_from = partition_floor(${new Date(start)}, width_days)`;
    await sql`select count(*) from partitioned_tables t, create_partitions(t.name, ${new Date(start)}, ${new Date(now + 14 * DAY)})`;
    const core = await writeCore(sql, now);
    let bulk: BulkTimes | null = null;
    let vacuumSeconds = 0;
    if (events > 0) {
      say(`${db}: writing ${events.toLocaleString('en-US')} events, as many deliveries and three times as many attempts with COPY`);
      bulk = await writeBulk(sql, events, now, core, (m) => say(`${db}: ${m}`));
    }
    const t0 = Date.now();
    await sql`vacuum (analyze) events, webhook_deliveries, webhook_attempts`;
    vacuumSeconds = (Date.now() - t0) / 1000;
    const meta: Meta = { now, core, events, bulk, vacuumSeconds };
    await sql`create table bench_meta (k text primary key, v jsonb not null)`;
    await sql`insert into bench_meta values ('meta', ${sql.json(meta as never)})`;
    return meta;
  } finally {
    await sql.end();
  }
}

async function services(cluster: PrivateCluster, db: string, name: Side['name'], meta: Meta): Promise<Side> {
  const prefix = `bench_retention_${name}`;
  await clearRedisPrefix(prefix);
  const config = loadConfig({ DATABASE_URL: cluster.url(db), REDIS_URL, REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  return { name, s: await createServices(config, pino({ level: 'silent' })), meta };
}

interface Measure {
  name: string;
  run(side: Side): Promise<void>;
}

const owner = (side: Side) => ({ accountId: side.meta.core.accountId, livemode: false });

const MEASURES: Measure[] = [
  { name: '`GET /v1/events` first page (10)', run: async (d) => void (await listEvents(d.s.sql, owner(d), { limit: 10 }, {})) },
  { name: '… deep page: `starting_after` an event 25 days old', run: async (d) => void (await listEvents(d.s.sql, owner(d), { limit: 10, starting_after: d.meta.core.oldEvent }, {})) },
  {
    // src/dashboard/events/pages.ts: the event, then its deliveries with their attempts and the endpoints.
    name: 'dashboard event page (event, deliveries with attempts, endpoints)',
    run: async (d) => {
      await findEvent(d.s.sql, owner(d), d.meta.core.recentEvent);
      await Promise.all([eventDeliveries(d.s, owner(d), d.meta.core.recentEvent, { limit: 10 }), listEndpoints(d.s.sql, owner(d), { limit: MAX_ENDPOINTS * 2 })]);
    },
  },
  {
    // Of the event 25 days old (the event page's keeps its one delivery).
    name: '`POST /v1/events/:id/resend` (one endpoint)',
    run: async (d) => {
      const made = await resendEvent(d.s, owner(d), d.meta.core.oldEvent, undefined);
      // Taken back, so that the next reconcile pass sees the same due deliveries.
      const ids = made.map((r) => r.id);
      await Promise.all(ids.map((id) => d.s.queues.get('webhook-delivery').remove(id)));
      await d.s.sql`delete from webhook_deliveries where id = any(${ids}::text[])`;
    },
  },
  { name: 'delivery reconcile pass (200 due, jobs live)', run: async (d) => void (await reconcileDeliveries(d.s)) },
  {
    name: "a delivery attempt's read (delivery, endpoint, event)",
    run: async (d) => {
      const [row] = await d.s.sql<{ id: string }[]>`select id from webhook_deliveries where event_id = ${d.meta.core.recentEvent} order by id limit 1`;
      await loadAttemptContexts(d.s.sql, [row!.id]);
    },
  },
];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;

async function timeCalls(m: Measure, side: Side, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await m.run(side);
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}

async function explainPlans(side: Side): Promise<string> {
  const { core } = side.meta;
  const a = core.accountId;
  const sql = side.s.sql;
  const [d] = await sql<{ id: string }[]>`select id from webhook_deliveries where event_id = ${core.recentEvent} order by id limit 1`;
  const q = (text: string) => text.replaceAll('$A', `'${a}'`);
  const statements = [
    q(`select * from events where account_id = $A and livemode = false and not sample order by id desc limit 11`),
    q(`select * from events where account_id = $A and livemode = false and not sample and id < '${core.oldEvent}' order by id desc limit 11`),
    q(`select * from events where id = '${core.recentEvent}' and account_id = $A and livemode = false`),
    q(`select * from webhook_deliveries where event_id = '${core.recentEvent}' and account_id = $A and livemode = false order by id desc limit 11`),
    `select * from webhook_attempts where delivery_id = any(array['${d!.id}']) and delivery_id between '${d!.id}' and '${d!.id}' order by delivery_id, attempt`,
    `select id from webhook_deliveries where status = 'PENDING' and next_attempt_at <= now() and id > '' order by id limit 500`,
  ];
  const out: string[] = [];
  for (const s of statements) {
    const rows = await sql.unsafe(`explain (analyze, buffers, costs off) ${s}`);
    out.push(`${s}\n${rows.map((r) => `  ${r['QUERY PLAN'] as string}`).join('\n')}\n`);
  }
  return out.join('\n');
}

interface Sizes {
  database: number;
  tables: Record<string, { bytes: number; partitions: number; rows: number }>;
}

/** Disk use and exact row counts of the three tables, as they are when measured (an earlier run's drop took a day off). */
async function sizes(cluster: PrivateCluster, db: string): Promise<Sizes> {
  const sql = postgres(cluster.url(db), { max: 1, onnotice: () => {} });
  try {
    const [dbRow] = await sql<{ b: number }[]>`select pg_database_size(current_database())::float8 as b`;
    const rows = await sql<{ parent: string; bytes: number; n: number }[]>`
      select parent, sum(pg_total_relation_size(to_regclass(quote_ident(partition))))::float8 as bytes, count(*)::int as n
      from table_partitions group by parent`;
    const tables: Sizes['tables'] = {};
    for (const r of rows) {
      const [c] = await sql.unsafe<{ n: number }[]>(`select count(*)::float8 as n from ${r.parent}`);
      tables[r.parent] = { bytes: r.bytes, partitions: r.n, rows: c!.n };
    }
    return { database: dbRow!.b, tables };
  } finally {
    await sql.end();
  }
}

const gb = (b: number) => `${(b / 1024 ** 3).toFixed(2)} GB`;

export async function run(): Promise<void> {
  const events = intEnv('BENCH_RETENTION_EVENTS', 10_000_000);
  const rounds = intEnv('BENCH_RETENTION_ROUNDS', 8);
  const iterations = intEnv('BENCH_RETENTION_ITERATIONS', 40);
  const migrationEvents = intEnv('BENCH_RETENTION_MIGRATION_EVENTS', 1_000_000);
  const keep = process.env.BENCH_RETENTION_DIR;
  const cluster = await startPrivateCluster(keep, {
    shared_buffers: '1GB',
    effective_cache_size: '4GB',
    maintenance_work_mem: '512MB',
    max_wal_size: '8GB',
    checkpoint_timeout: '15min',
    max_connections: '60',
  });
  const sides: Side[] = [];
  try {
    const emptyMeta = await prepare(cluster, 'bench_empty', 0);
    const largeMeta = await prepare(cluster, 'bench_large', events);
    const sizeEmpty = await sizes(cluster, 'bench_empty');
    const sizeLarge = await sizes(cluster, 'bench_large');
    sides.push(await services(cluster, 'bench_empty', 'empty', emptyMeta), await services(cluster, 'bench_large', 'large', largeMeta));

    say('warming up both databases');
    for (const m of MEASURES) for (const side of sides) await timeCalls(m, side, 5, []);
    const samples = new Map<string, { empty: number[]; large: number[] }>(MEASURES.map((m) => [m.name, { empty: [], large: [] }]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const m of MEASURES) for (const side of order) await timeCalls(m, side, iterations, samples.get(m.name)![side.name]);
      say(`round ${r + 1}/${rounds} done`);
    }
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(path.join(OUT_DIR, 'retention-plans.txt'), await explainPlans(sides[1]!));

    say('a day of retention dropped while inserts run');
    const drop: DropResult = await measureDrop(cluster.url('bench_large'), largeMeta.core);
    const migration: MigrationResult | null = migrationEvents > 0 ? await measureMigration(cluster, migrationEvents, (m) => say(m)) : null;

    const env = await environmentNote(sides[1]!.s.sql);
    const rows = MEASURES.map((m) => {
      const x = samples.get(m.name)!;
      const ratio = median(x.large) / median(x.empty);
      return [m.name, fmtMs(median(x.empty)), fmtMs(median(x.large)), fmtMs(p95(x.empty)), fmtMs(p95(x.large)), `${ratio.toFixed(2)} ×`, `≤ ${TARGET_RATIO} ×`, verdict(ratio <= TARGET_RATIO)];
    });
    const { bulk } = largeMeta;
    const markdown = [
      '## Retention: bounded tables at 10 million events (issue 23)',
      '',
      env,
      `Private PostgreSQL 15 cluster (shared_buffers 1 GB) on the same machine, shared with other engineers' test runs. Large: ${fmtNum(largeMeta.events)} events,`,
      `${fmtNum(largeMeta.events)} deliveries, ${fmtNum(largeMeta.events * 3)} attempts written over 30 days and a bit (daily partitions) plus the core`,
      `(when measured: ${['events', 'webhook_deliveries', 'webhook_attempts'].map((t) => `${fmtNum(sizeLarge.tables[t]!.rows)} ${t}`).join(', ')}; each run drops a day);`,
      `empty: the core only (${fmtNum(largeMeta.core.coreEvents)} events of the measured account, one delivery each, ${largeMeta.core.pendingDue} of them due for a retry).`,
      `Each call is the service's own function (src/events/store.ts, src/webhooks/…) on its postgres.js pool; ${rounds} rounds of ${iterations} calls per database, the two interleaved.`,
      '',
      table(['Measurement', 'empty p50', 'large p50', 'empty p95', 'large p95', 'large / empty (p50)', 'Target', 'Result'], rows),
      '',
      table(
        ['Generation (COPY, one connection)', 'seconds', 'rows/s'],
        bulk
          ? [
              ['events', bulk.events.toFixed(0), fmtNum(largeMeta.events / bulk.events)],
              ['deliveries', bulk.deliveries.toFixed(0), fmtNum(largeMeta.events / bulk.deliveries)],
              ['attempts', bulk.attempts.toFixed(0), fmtNum((3 * largeMeta.events) / bulk.attempts)],
              ['`vacuum (analyze)` of the three', largeMeta.vacuumSeconds.toFixed(0), ''],
            ]
          : [],
      ),
      '',
      table(
        ['Disk (tables with their indexes)', 'large', 'partitions', 'empty'],
        [
          ...['events', 'webhook_deliveries', 'webhook_attempts'].map((t) => [t, gb(sizeLarge.tables[t]!.bytes), String(sizeLarge.tables[t]!.partitions), gb(sizeEmpty.tables[t]!.bytes)]),
          ['whole database', gb(sizeLarge.database), '', gb(sizeEmpty.database)],
        ],
      ),
      '',
      drop.markdown,
      '',
      migration?.markdown ?? '',
      '',
      `Plans of the large database's statements: bench/out/retention-plans.txt. Reproduce: \`npm run bench -- retention\` (about half an hour and 25 GB of disk; BENCH_RETENTION_DIR=/some/dir keeps the cluster for the next run, which skips writing the large database).`,
    ].join('\n');
    await writeSection('retention', markdown);
  } finally {
    for (const side of sides) {
      await closeServices(side.s).catch(() => {});
      await clearRedisPrefix(side.s.config.redisPrefix).catch(() => {});
    }
    if (keep) await cluster.stop();
    else await cluster.destroy();
  }
}
