// Issue 28, point 4: where an expiry's time goes, as A/B ratios measured in the same run.
// Two databases, one with the checkout_sessions indexes as before migration 0042 ("before") and
// one migrated ("after"); in each round, every cell seeds BENCH_EXPIRY_AB_ROWS due sessions and
// drains them with the sweeper's own statements (store.markDueExpired, insertEvents, the fan-out's
// subscription query), P drains of batches of B in parallel, as startExpirySweeper does. Cells run
// in a rotating order, rounds interleave, and each cell's rate is reported as a ratio to the
// baseline cell of the same round (before, bare rows, 500 × 4). Row shapes: "bare" as
// bench/checkout.ts writes them (no customer, email or metadata), "full" with an email, metadata
// and line items (every partial index of 0042 then takes the row, as before).
// `npm run bench -- expiry`; small: `BENCH_EXPIRY_AB_ROWS=2000 BENCH_EXPIRY_AB_ROUNDS=2 npm run bench -- expiry`.
import os from 'node:os';
import postgres from 'postgres';
import { presentSession } from '../src/checkout/presenter.ts';
import { markDueExpired, type SessionRow } from '../src/checkout/store.ts';
import { insertEvents } from '../src/events/store.ts';
import { newId } from '../src/lib/ids.ts';
import { subscriptionsOf } from '../src/webhooks/deliveries.ts';
import { createAccountKey, dropBenchDatabase, environmentNote, fmtNum, freshDatabase, processCpuSeconds, say, table, writeSection, type BenchDb } from './lib.ts';

const ROWS = Number(process.env.BENCH_EXPIRY_AB_ROWS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_EXPIRY_AB_ROUNDS ?? 3);

/** The indexes as migrations 0002 and 0037 made them, for the "before" database. */
export const BEFORE_0042 = `
  drop index checkout_sessions_customer_page;
  create index checkout_sessions_customer_page on checkout_sessions (account_id, livemode, customer_id, id);
  drop index checkout_sessions_search_email;
  create index checkout_sessions_search_email on checkout_sessions (account_id, livemode, lower(customer_email), id);
  drop index checkout_sessions_search_metadata;
  create index checkout_sessions_search_metadata on checkout_sessions using gin (metadata jsonb_path_ops);
  do $$ begin
    if exists (select 1 from pg_indexes where indexname = 'checkout_sessions_search_text') then
      drop index checkout_sessions_search_text;
      create index checkout_sessions_search_text on checkout_sessions using gin ((lower(coalesce(customer_email, ''))) gin_trgm_ops);
    end if;
  end $$;`;

type Shape = 'bare' | 'full';
interface Cell {
  name: string;
  db: 'before' | 'after';
  shape: Shape;
  batch: number;
  parallel: number;
}

const BASELINE_0042: Cell = { name: 'before 0042, bare rows, 500 × 4', db: 'before', shape: 'bare', batch: 500, parallel: 4 };
const CELLS_0042: Cell[] = [
  BASELINE_0042,
  { name: 'after 0042, bare rows, 500 × 4', db: 'after', shape: 'bare', batch: 500, parallel: 4 },
  { name: 'before 0042, full rows, 500 × 4', db: 'before', shape: 'full', batch: 500, parallel: 4 },
  { name: 'after 0042, full rows, 500 × 4', db: 'after', shape: 'full', batch: 500, parallel: 4 },
  { name: 'after 0042, bare rows, 250 × 4', db: 'after', shape: 'bare', batch: 250, parallel: 4 },
  { name: 'after 0042, bare rows, 1000 × 4', db: 'after', shape: 'bare', batch: 1000, parallel: 4 },
  { name: 'after 0042, bare rows, 2000 × 4', db: 'after', shape: 'bare', batch: 2000, parallel: 4 },
  { name: 'after 0042, bare rows, 500 × 2', db: 'after', shape: 'bare', batch: 500, parallel: 2 },
  { name: 'after 0042, bare rows, 500 × 8', db: 'after', shape: 'bare', batch: 500, parallel: 8 },
];

/**
 * BENCH_EXPIRY_AB_SET=batch (issue 28.4, second round): a batch's fixed cost against its cost per
 * session, from one drain's CPU per session at batch sizes 10 to 1,000 (cpu(B) = fixed / B + per
 * session), and small batches in parallel against one drain.
 */
const CELLS_BATCH: Cell[] = [
  { name: 'bare rows, 1000 × 1', db: 'after', shape: 'bare', batch: 1000, parallel: 1 },
  { name: 'bare rows, 200 × 1', db: 'after', shape: 'bare', batch: 200, parallel: 1 },
  { name: 'bare rows, 50 × 1', db: 'after', shape: 'bare', batch: 50, parallel: 1 },
  { name: 'bare rows, 10 × 1', db: 'after', shape: 'bare', batch: 10, parallel: 1 },
  { name: 'bare rows, 50 × 4', db: 'after', shape: 'bare', batch: 50, parallel: 4 },
  { name: 'bare rows, 1000 × 4', db: 'after', shape: 'bare', batch: 1000, parallel: 4 },
];
const CELLS = process.env.BENCH_EXPIRY_AB_SET === 'batch' ? CELLS_BATCH : CELLS_0042;
const BASELINE = CELLS[0]!;

interface Target {
  db: BenchDb;
  /** A pool as large as the widest cell's drains. */
  pool: postgres.Sql;
  accountId: string;
}

async function seed(t: Target, shape: Shape, n: number): Promise<void> {
  for (let i = 0; i < n; i += 5000) {
    const ids = Array.from({ length: Math.min(5000, n - i) }, () => newId('cs'));
    if (shape === 'bare') {
      await t.pool`
        insert into checkout_sessions (id, account_id, livemode, amount_cents, currency, success_url, expires_at)
        select id, ${t.accountId}, false, 1999, 'usd', 'https://merchant.example/thanks', now() - interval '1 minute'
        from unnest(${ids}::text[]) as t(id)`;
    } else {
      await t.pool`
        insert into checkout_sessions (id, account_id, livemode, amount_cents, currency, success_url, customer_email, metadata, line_items, expires_at)
        select id, ${t.accountId}, false, 4900, 'usd', 'https://merchant.example/thanks', 'payer' || n || '@example.com',
          jsonb_build_object('order_id', n::text), '[{"name": "Green tea, 100 g", "quantity": 2, "amount": 850}, {"name": "Teapot", "quantity": 1, "amount": 3200}]'::jsonb,
          now() - interval '1 minute'
        from unnest(${ids}::text[]) with ordinality as t(id, n)`;
    }
  }
  await t.pool`analyze checkout_sessions`;
}

/** One sweeper batch (expireDueBatch without its after-commit hooks): the same statements. */
async function batch(t: Target, limit: number): Promise<number> {
  return t.pool.begin(async (tx) => {
    const rows: SessionRow[] = await markDueExpired(tx as never, null, limit);
    if (rows.length === 0) return 0;
    const events = await insertEvents(tx as never, rows.map((r) => ({ accountId: r.account_id, type: 'checkout.session.expired' as const, object: presentSession(r, 'https://pay.example/c') })));
    await subscriptionsOf(tx as never, events.map((e, i) => ({ accountId: rows[i]!.account_id, livemode: e.livemode, eventId: e.id, type: e.type, objectId: e.data.object.id })));
    return rows.length;
  }) as Promise<number>;
}

/** CPU seconds of the database's Postgres backends so far (they live as long as the pool). */
async function backendCpu(t: Target): Promise<number> {
  const rows = await t.db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${t.db.name} and pid <> pg_backend_pid()`;
  let s = 0;
  for (const r of rows) {
    try {
      s += processCpuSeconds(r.pid);
    } catch {
      // a backend that ended meanwhile
    }
  }
  return s;
}

interface Drained {
  /** Sessions expired per second of wall time. */
  rate: number;
  /** CPU µs per session: the Postgres backends, and this process (the sweeper's own work). */
  pgUs: number;
  nodeUs: number;
}

/** Expires `n` due sessions with the cell's drains. */
async function drain(t: Target, c: Cell, n: number): Promise<Drained> {
  const pg0 = await backendCpu(t);
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: c.parallel }, async () => {
      for (;;) {
        const k = await batch(t, c.batch);
        done += k;
        if (k < c.batch) return;
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  const node = process.cpuUsage(node0);
  const pg = (await backendCpu(t)) - pg0;
  if (done !== n) throw new Error(`${c.name}: expired ${done} of ${n}`);
  return { rate: n / s, pgUs: (pg * 1e6) / n, nodeUs: (node.user + node.system) / n };
}

export async function run(): Promise<void> {
  const maxParallel = Math.max(...CELLS.map((c) => c.parallel));
  const targets = {} as Record<'before' | 'after', Target>;
  for (const which of ['before', 'after'] as const) {
    const db = await freshDatabase(`expiry_${which}`);
    if (which === 'before') await db.sql.unsafe(BEFORE_0042);
    const pool = postgres(db.url, { max: maxParallel + 1, onnotice: () => {} });
    targets[which] = { db, pool, accountId: (await createAccountKey(db.sql, 'test')).accountId };
    // Every connection of the pool open before the first measurement (their CPU is read by pid).
    await Promise.all(Array.from({ length: maxParallel + 1 }, () => pool`select pg_sleep(0.05)`));
  }
  const env = await environmentNote(targets.after.db.sql);
  const rates = new Map<string, number[]>(CELLS.map((c) => [c.name, []]));
  const ratios = new Map<string, number[]>(CELLS.map((c) => [c.name, []]));
  const pgUs = new Map<string, number[]>(CELLS.map((c) => [c.name, []]));
  const nodeUs = new Map<string, number[]>(CELLS.map((c) => [c.name, []]));
  const cpuRatios = new Map<string, number[]>(CELLS.map((c) => [c.name, []]));
  const loads: number[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = CELLS.map((_, i) => CELLS[(i + r) % CELLS.length]!);
      const got = new Map<string, Drained>();
      for (const c of order) {
        const t = targets[c.db];
        await seed(t, c.shape, ROWS);
        const d = await drain(t, c, ROWS);
        got.set(c.name, d);
        rates.get(c.name)!.push(d.rate);
        pgUs.get(c.name)!.push(d.pgUs);
        nodeUs.get(c.name)!.push(d.nodeUs);
        say(`expiry: round ${r + 1}, ${c.name}: ${fmtNum(d.rate)} sessions/s, Postgres ${fmtNum(d.pgUs)} µs and node ${fmtNum(d.nodeUs)} µs CPU a session (load ${os.loadavg()[0]!.toFixed(1)})`);
      }
      loads.push(os.loadavg()[0]!);
      const base = got.get(BASELINE.name)!;
      for (const c of CELLS) {
        const d = got.get(c.name)!;
        ratios.get(c.name)!.push(d.rate / base.rate);
        cpuRatios.get(c.name)!.push((d.pgUs + d.nodeUs) / (base.pgUs + base.nodeUs));
      }
    }
  } finally {
    for (const t of Object.values(targets)) {
      await t.pool.end({ timeout: 5 });
      await t.db.close();
      await dropBenchDatabase(t.db.name);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const batchSet = CELLS === CELLS_BATCH;
  await writeSection(
    batchSet ? 'expiry-batch' : 'expiry',
    `## Expiry: where the time goes (issue 28, point 4${batchSet ? ', second round: fixed cost of a batch' : ''})

${env}; load average (1 min) after each round: ${loads.map((l) => l.toFixed(1)).join(', ')}.
Each cell seeds ${fmtNum(ROWS)} due sessions and expires them with the sweeper's statements
(\`markDueExpired\`, \`insertEvents\` of one \`checkout.session.expired\` each, the fan-out's
subscription query; no webhook endpoint), B sessions a transaction, P transactions at once.
${ROUNDS} rounds, cells in a rotating order; the ratio is to the first cell of the same round, the
median over the rounds. CPU is read from /proc for the database's Postgres backends and for this
process (the sweeper's JavaScript): on a shared, loaded machine it is the steadier figure, the
wall-clock rate moves with everyone else's load. "before 0042": the four indexes of checkout_sessions as migrations 0002 and
0037 made them; "after": partial (migration 0042). Bare rows have no customer, email or metadata
(as bench/checkout.ts writes them); full rows have an email, metadata and line items.

${table(
  ['Cell (indexes, rows, B × P)', 'CPU µs a session, Postgres + node, median', 'CPU ratio to the baseline, median (each round)', 'Sessions/s, median (each round)', 'Rate ratio to the baseline, median (each round)'],
  CELLS.map((c) => [
    c.name,
    `${fmtNum(median(pgUs.get(c.name)!))} + ${fmtNum(median(nodeUs.get(c.name)!))}`,
    `${median(cpuRatios.get(c.name)!).toFixed(2)} (${cpuRatios.get(c.name)!.map((x) => x.toFixed(2)).join(', ')})`,
    `${fmtNum(median(rates.get(c.name)!))} (${rates.get(c.name)!.map((x) => fmtNum(x)).join(', ')})`,
    `${median(ratios.get(c.name)!).toFixed(2)} (${ratios.get(c.name)!.map((x) => x.toFixed(2)).join(', ')})`,
  ]),
)}

Reproduce: \`${batchSet ? 'BENCH_EXPIRY_AB_SET=batch ' : ''}BENCH_EXPIRY_AB_ROWS=${ROWS} BENCH_EXPIRY_AB_ROUNDS=${ROUNDS} npm run bench -- expiry\`.`,
  );
}
