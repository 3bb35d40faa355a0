// The checkout benchmark (issue 3, point 11):
// 1. POST /v1/checkout/sessions at 50 connections, as a ratio to the pgbench single-row insert;
// 2. expiry at scale: BENCH_EXPIRY_SESSIONS (default 100,000) sessions whose expires_at fall within
//    the same 10 seconds: how late the last one turns EXPIRED, and Redis memory per pending session.
// `npm run bench -- checkout`; small run: `BENCH_SECONDS=5 BENCH_EXPIRY_SESSIONS=5000 npm run bench -- checkout`.
// A/B of the expiry alone (issue 28.4, second round): BENCH_EXPIRY_AB_DIR=<a checkout of another
// version, with node_modules> runs only the burst, BENCH_EXPIRY_AB_ROUNDS times (default 2) for
// each version, alternating, each on a fresh database, and writes the section `checkout-expiry-ab`.
import os from 'node:os';
import { Redis } from 'ioredis';
import { SWEEP_BATCH, SWEEP_PARALLEL } from '../src/checkout/jobs.ts';
import { BEFORE_0042 } from './expiry.ts';
import { newId } from '../src/lib/ids.ts';
import {
  createAccountKey,
  dropBenchDatabase,
  environmentNote,
  fmtMs,
  fmtNum,
  fmtRatio,
  freshDatabase,
  insertReference,
  load,
  processCpuSeconds,
  say,
  serviceEnvNote,
  startService,
  table,
  verdict,
  writeSection,
  type BenchDb,
  type BenchSettings,
  type LoadResult,
  type PgbenchResult,
} from './lib.ts';

const CREATE_RATIO_TARGET = 0.3;
const LATENESS_TARGET_S = 1; // issue 28, point 4
const MEMORY_TARGET_BYTES = 300;
/** The issue's window is 10 s; BENCH_EXPIRY_WINDOW_S changes it for experiments (drain rate). */
const WINDOW_S = Number(process.env.BENCH_EXPIRY_WINDOW_S ?? 10);
const PREFIX = 'bench_checkout'; // startService's Redis prefix for this suite
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createThroughput(db: BenchDb, settings: BenchSettings): Promise<{ api: LoadResult; ref: PgbenchResult }> {
  const { key } = await createAccountKey(db.sql, 'test');
  say('checkout: pgbench single-row insert reference');
  const ref = await insertReference(db, settings);
  const svc = await startService({ suite: 'checkout', databaseUrl: db.url });
  try {
    say(`checkout: POST /v1/checkout/sessions, ${settings.connections} connections, ${settings.seconds} s`);
    const api = await load(
      {
        url: svc.url,
        method: 'POST',
        path: '/v1/checkout/sessions',
        key,
        body: {
          currency: 'usd',
          success_url: 'https://merchant.example/thanks?session={CHECKOUT_SESSION_ID}',
          cancel_url: 'https://merchant.example/cart',
          line_items: [
            { name: 'Green tea, 100 g', quantity: 2, amount: 850 },
            { name: 'Teapot', quantity: 1, amount: 3200 },
          ],
          customer_email: 'payer@example.com',
          metadata: { order_id: '1042' },
        },
        service: svc,
      },
      settings,
    );
    return { api, ref };
  } finally {
    await svc.stop();
  }
}

interface ExpiryResult {
  sessions: number;
  setupSeconds: number;
  setupLate: boolean;
  expired: number;
  lastLatenessS: number;
  p50LatenessS: number;
  p99LatenessS: number;
  drainSeconds: number;
  /** Keys under the service's Redis prefix for the session-expiry queue while the sessions were pending. */
  expiryKeys: number;
  usedMemoryDelta: number;
  expiredByReconciler: number;
  /** `checkout.session.expired` events of the account (one per expired session expected). */
  events: number;
  /** Sessions / (last expired_at - window start): the drain rate over the whole burst. */
  drainRate: number;
  /** CPU µs per session from the window's start to the last expiry: the service process, the database's backends. */
  svcCpuUs: number;
  pgCpuUs: number;
}

/** CPU seconds of each backend of the database now (the bench's own count polling included). */
async function backendCpu(db: BenchDb): Promise<Map<number, number>> {
  const rows = await db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${db.name}`;
  return new Map(rows.map((r) => [r.pid, processCpuSeconds(r.pid)] as const).filter(([, c]) => Number.isFinite(c)));
}

/**
 * Rows are written straight into Postgres, as createSession writes them (since issue 28 a session
 * has no job: its expires_at is the schedule); the service, running as it does in production,
 * then has to expire them all.
 */
async function expiryAtScale(db: BenchDb, n: number, cwd?: string): Promise<ExpiryResult> {
  const { accountId } = await createAccountKey(db.sql, 'test');
  const svc = await startService({ suite: 'checkout', databaseUrl: db.url, ...(cwd ? { cwd } : {}) });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    const leadS = 10 + Math.ceil(n * 0.0001); // time to write the rows before the window opens
    const windowStart = Math.ceil(Date.now() / 1000) + leadS;
    say(`checkout: ${fmtNum(n)} sessions expiring in [${leadS} s, ${leadS + WINDOW_S} s) from now`);
    const memBefore = await usedMemory(redis);
    const t0 = Date.now();
    const chunk = 5000;
    for (let i = 0; i < n; i += chunk) {
      const rows = Array.from({ length: Math.min(chunk, n - i) }, (_, j) => ({
        id: newId('cs'),
        // Spread evenly over the window, to the millisecond.
        expires_at: new Date(windowStart * 1000 + Math.floor(((i + j) / n) * WINDOW_S * 1000)),
      }));
      await db.sql`
        insert into checkout_sessions (id, account_id, livemode, amount_cents, currency, success_url, expires_at)
        select id, ${accountId}, false, 1999, 'usd', 'https://merchant.example/thanks', expires_at
        from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.expires_at.toISOString())}::timestamptz[]) as t(id, expires_at)`;
    }
    const setupSeconds = (Date.now() - t0) / 1000;
    const setupLate = Date.now() > windowStart * 1000;
    say(`checkout: set up in ${setupSeconds.toFixed(1)} s${setupLate ? ' (LATE: the window had opened)' : ''}`);

    const usedMemoryDelta = (await usedMemory(redis)) - memBefore;
    let expiryKeys = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:session-expiry:*`, 'COUNT', 1000);
      cursor = next;
      expiryKeys += keys.length;
    } while (cursor !== '0');

    await sleep(Math.max(0, windowStart * 1000 - Date.now()));
    const svcCpu0 = svc.cpuSeconds();
    const pgCpu0 = await backendCpu(db);
    const windowEnd = (windowStart + WINDOW_S) * 1000;
    const giveUp = windowEnd + 300_000;
    let expired = 0;
    while (Date.now() < giveUp) {
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from checkout_sessions where account_id = ${accountId} and status = 'EXPIRED'`;
      expired = row!.n;
      if (expired === n) break;
      await sleep(250);
    }
    const drainSeconds = (Date.now() - windowStart * 1000) / 1000;
    const svcCpu = svc.cpuSeconds() - svcCpu0;
    let pgCpu = 0;
    for (const [pid, c] of await backendCpu(db)) pgCpu += c - (pgCpu0.get(pid) ?? 0);
    const [lat] = await db.sql<{ last: number; p50: number; p99: number }[]>`
      select max(extract(epoch from expired_at - expires_at))::float8 as last,
             percentile_cont(0.5) within group (order by extract(epoch from expired_at - expires_at))::float8 as p50,
             percentile_cont(0.99) within group (order by extract(epoch from expired_at - expires_at))::float8 as p99
      from checkout_sessions where account_id = ${accountId} and status = 'EXPIRED'`;
    const [events] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from events where account_id = ${accountId} and type = 'checkout.session.expired'`;
    if (events!.n !== expired) say(`checkout: ${events!.n} expired events for ${expired} expired sessions`);
    const reconciled = await reconcilerCount(svc.logFile);
    return {
      sessions: n,
      setupSeconds,
      setupLate,
      expired,
      lastLatenessS: lat!.last ?? Number.NaN,
      p50LatenessS: lat!.p50 ?? Number.NaN,
      p99LatenessS: lat!.p99 ?? Number.NaN,
      drainSeconds,
      expiryKeys,
      usedMemoryDelta,
      expiredByReconciler: reconciled,
      events: events!.n,
      drainRate: n / (WINDOW_S + (lat!.last ?? Number.NaN)),
      svcCpuUs: (svcCpu * 1e6) / n,
      pgCpuUs: (pgCpu * 1e6) / n,
    };
  } finally {
    redis.disconnect();
    await svc.stop();
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** How many sessions the reconciler (not their own job) expired, from the service log. */
async function reconcilerCount(logFile: string): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  let total = 0;
  for (const line of (await readFile(logFile, 'utf8')).split('\n')) {
    const m = /"expired":(\d+).*expired sessions the expiry sweeper had missed/.exec(line);
    if (m) total += Number(m[1]);
  }
  return total;
}

/** The burst alone, this checkout and BENCH_EXPIRY_AB_DIR's alternating, each on a fresh database. */
async function expiryAB(n: number, baseDir: string): Promise<void> {
  const rounds = Number(process.env.BENCH_EXPIRY_AB_ROUNDS ?? 2);
  const runs: Array<{ who: 'this' | 'base'; e: ExpiryResult; load: number }> = [];
  let env = '';
  for (let r = 0; r < rounds; r++) {
    for (const who of r % 2 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
      const db = await freshDatabase('checkout_ab');
      try {
        env ||= await environmentNote(db.sql);
        const e = await expiryAtScale(db, n, who === 'base' ? baseDir : undefined);
        runs.push({ who, e, load: os.loadavg()[0]! });
        say(`checkout A/B: round ${r + 1}, ${who}: last ${e.lastLatenessS.toFixed(2)} s late, p50 ${e.p50LatenessS.toFixed(2)} s, ${fmtNum(e.drainRate)}/s, CPU ${fmtNum(e.svcCpuUs)} + ${fmtNum(e.pgCpuUs)} µs a session (load ${os.loadavg()[0]!.toFixed(1)})`);
      } finally {
        await db.close();
        await dropBenchDatabase(db.name);
      }
    }
  }
  await writeSection(
    'checkout-expiry-ab',
    `## Checkout expiry, A/B in one run

${env}. ${fmtNum(n)} bare sessions due evenly over ${WINDOW_S} s, expired by the service (\`node src/main.ts\`)
of this checkout ("this") and of \`${baseDir}\` ("base"), alternating, each on a fresh database. Drain
rate: sessions / (${WINDOW_S} s + lateness of the last). CPU from the window's start to the last expiry:
the service process, and the database's Postgres backends (the bench's count every 250 ms included).

${table(
  ['Round', 'Version', 'Last / p50 / p99 late', 'Drain rate', 'CPU µs a session, service + Postgres', 'Expired, events', 'Load (1 min) after'],
  runs.map((x, i) => [
    String(Math.floor(i / 2) + 1),
    x.who,
    `${x.e.lastLatenessS.toFixed(2)} s / ${x.e.p50LatenessS.toFixed(2)} s / ${x.e.p99LatenessS.toFixed(2)} s`,
    `${fmtNum(x.e.drainRate)}/s`,
    `${fmtNum(x.e.svcCpuUs)} + ${fmtNum(x.e.pgCpuUs)}`,
    `${fmtNum(x.e.expired)} of ${fmtNum(x.e.sessions)}, ${fmtNum(x.e.events)}${x.e.expiredByReconciler ? `, ${fmtNum(x.e.expiredByReconciler)} by the reconciler` : ''}`,
    x.load.toFixed(1),
  ]),
)}

Reproduce: \`${WINDOW_S !== 10 ? `BENCH_EXPIRY_WINDOW_S=${WINDOW_S} ` : ''}BENCH_EXPIRY_AB_DIR=${baseDir} BENCH_EXPIRY_AB_ROUNDS=${rounds} BENCH_EXPIRY_SESSIONS=${n} npm run bench -- checkout\`.`,
  );
}

export async function run(settings: BenchSettings): Promise<void> {
  const n = Number((process.env.BENCH_EXPIRY_SESSIONS ?? '100000').replace(/[_,]/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error('BENCH_EXPIRY_SESSIONS must be a positive integer');
  if (process.env.BENCH_EXPIRY_AB_DIR) return expiryAB(n, process.env.BENCH_EXPIRY_AB_DIR);
  const db = await freshDatabase('checkout');
  try {
    const env = await environmentNote(db.sql);
    const { api, ref } = await createThroughput(db, settings);
    const ratio = api.rps / ref.tps;
    say(`checkout: ${fmtNum(api.rps)} creates/s vs ${fmtNum(ref.tps)} inserts/s (${fmtRatio(api.rps, ref.tps)})`);
    // The same burst on a database whose checkout_sessions indexes are as before migration 0042
    // (issue 28.4), right after, in the same run: BENCH_EXPIRY_BASELINE=0 leaves it out.
    const e = await expiryAtScale(db, n);
    let before: ExpiryResult | undefined;
    if (process.env.BENCH_EXPIRY_BASELINE !== '0') {
      const old = await freshDatabase('checkout_before');
      try {
        await old.sql.unsafe(BEFORE_0042);
        before = await expiryAtScale(old, n);
        say(`checkout: indexes as before 0042: last expiry ${before.lastLatenessS.toFixed(2)} s late`);
      } finally {
        await old.close();
        await dropBenchDatabase(old.name);
      }
    }
    const perSession = Math.max(0, e.usedMemoryDelta / e.sessions);
    say(`checkout: last expiry ${e.lastLatenessS.toFixed(2)} s late; ${e.expiryKeys} expiry keys in Redis`);
    const note = serviceEnvNote();

    await writeSection(
      'checkout',
      `## Checkout

${env}.
The service is \`node src/main.ts\` (web and workers in one process, default configuration, LOG_LEVEL
info) on the same machine as autocannon, PostgreSQL and Redis.${note ? `\n${note}` : ''}

### Creating sessions

${table(
  ['Measurement', 'Value', 'Reference', 'Ratio', 'Target', 'Result'],
  [
    [
      '`POST /v1/checkout/sessions`, 50 connections',
      `${fmtNum(api.rps)} req/s, p50 ${fmtMs(api.p50)}, p99 ${fmtMs(api.p99)}, non-2xx ${fmtNum(api.non2xx)}`,
      `${fmtNum(ref.tps)} tps (pgbench single-row insert, 50 clients)`,
      fmtRatio(api.rps, ref.tps),
      `≥ ${CREATE_RATIO_TARGET}`,
      verdict(ratio >= CREATE_RATIO_TARGET && api.non2xx === 0),
    ],
    ['Service CPU per create', `${fmtNum(api.serviceCpuUs ?? Number.NaN)} µs`, '', '', '', ''],
  ],
)}

Each create validates the body (two line items, metadata and a customer_email) and inserts the session
(one statement) before answering; nothing goes to Redis (issue 28: expiry is swept from Postgres).

### Expiry at scale

${fmtNum(e.sessions)} OPEN sessions whose \`expires_at\` are spread evenly over the same ${WINDOW_S} s, written
straight into Postgres as \`createSession\` writes them (set up in ${e.setupSeconds.toFixed(1)} s${e.setupLate ? ', **which overran the start of the window**' : ', before the window opened'}).
A session has no job (issue 28): the expiry sweeper of the worker (src/checkout/jobs.ts) reads the
next \`expires_at\` from the partial index on OPEN sessions, sleeps until then (at most 500 ms), and
expires what is due in batches of ${fmtNum(SWEEP_BATCH)} (${SWEEP_PARALLEL} at once in a burst), each batch one transaction with one insert for its events.

${table(
  ['Measurement', 'Value', 'Target', 'Result'],
  [
    ['Sessions EXPIRED (each with one `checkout.session.expired`)', `${fmtNum(e.expired)} of ${fmtNum(e.sessions)}`, 'all', verdict(e.expired === e.sessions)],
    ['Lateness of the last one (expired_at − expires_at, max)', `${e.lastLatenessS.toFixed(2)} s`, `≤ ${LATENESS_TARGET_S} s`, verdict(e.lastLatenessS <= LATENESS_TARGET_S)],
    ['Lateness p50 / p99', `${e.p50LatenessS.toFixed(2)} s / ${e.p99LatenessS.toFixed(2)} s`, '', ''],
    ['Sessions expired by the reconciler instead of the sweeper', fmtNum(e.expiredByReconciler), '', ''],
    ...(before
      ? [[
          'Same burst, next in this run, indexes as before migration 0042: last / p50 late, by the reconciler',
          `${before.lastLatenessS.toFixed(2)} s / ${before.p50LatenessS.toFixed(2)} s, ${fmtNum(before.expiredByReconciler)}`,
          '',
          '',
        ]]
      : []),
    ['Redis keys of the session-expiry queue while they were pending', `${fmtNum(e.expiryKeys)} (the queue's own, none per session)`, `none per session`, verdict(e.expiryKeys < 10)],
    ['Redis memory per pending session (used_memory growth / sessions)', `${fmtNum(perSession)} B`, `< ${MEMORY_TARGET_BYTES} B (0 expected)`, verdict(perSession < MEMORY_TARGET_BYTES)],
  ],
)}

The used_memory growth also counts whatever else used the shared Redis meanwhile (other suites,
other engineers' tests), so the key count is the exact figure.

Reproduce: \`BENCH_SECONDS=${settings.seconds} BENCH_EXPIRY_SESSIONS=${e.sessions} npm run bench -- checkout\`.`,
    );
  } finally {
    await db.close();
  }
}
