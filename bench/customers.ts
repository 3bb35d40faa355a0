// The customers benchmark (issue 2, point 14): the API against pgbench on the same machine.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { newId } from '../src/lib/ids.ts';
import {
  createAccountKey,
  environmentNote,
  fmtMs,
  fmtNum,
  fmtRatio,
  freshDatabase,
  insertReference,
  load,
  say,
  selectReference,
  serviceEnvNote,
  startService,
  table,
  verdict,
  writeSection,
  type BenchDb,
  type BenchSettings,
  pgbench,
  type LoadResult,
  type PgbenchResult,
} from './lib.ts';

const TARGETS = { create: 0.35, get: 0.35, deepPage: 1.25 };
/** Ids kept for random GETs; enough that the reads spread over the whole table. */
const SAMPLE_IDS = 100_000;

interface Seeded {
  /** A spread of existing ids, for random GETs. */
  sample: string[];
  /** The id about 90 % of the way down the list (900,000 rows down in a million). */
  deepCursor: string;
  deepRowsDown: number;
}

/**
 * The id the processor simulator gives this customer (src/processor/simulator.ts): seeded rows are
 * already synced, so the reconciler finds nothing to re-enqueue while the benchmark runs.
 */
const processorId = (customerId: string) => `pcus_sim_${createHash('sha256').update(`test:${customerId}`).digest('hex').slice(0, 24)}`;

/**
 * `rows` customers of one account and mode, streamed through COPY with ids from newId(), so they
 * are real time-ordered `cus_` ids minted one after another: the last row is the newest.
 */
async function seed(db: BenchDb, accountId: string, rows: number): Promise<Seeded> {
  const every = Math.max(1, Math.floor(rows / SAMPLE_IDS));
  const deepRowsDown = Math.floor(rows * 0.9);
  const deepIndex = rows - 1 - deepRowsDown;
  const sample: string[] = [];
  let deepCursor = '';
  function* lines(): Generator<string> {
    let chunk = '';
    for (let i = 0; i < rows; i++) {
      const id = newId('cus');
      if (i % every === 0) sample.push(id);
      if (i === deepIndex) deepCursor = id;
      chunk += `${id}\t${accountId}\tf\tcustomer${i}@example.com\tBench\tCustomer ${i}\t{"seq":"${i}"}\t${processorId(id)}\n`;
      if (chunk.length > 64_000) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  const copy = await db.sql`copy customers (id, account_id, livemode, email, first_name, last_name, metadata, processor_customer_id) from stdin`.writable();
  await pipeline(Readable.from(lines()), copy);
  await db.sql`vacuum analyze customers`;
  await db.sql`checkpoint`;
  return { sample, deepCursor, deepRowsDown };
}

/**
 * Diagnostic beside the scratch reference: pgbench making exactly the API's insert (same table,
 * indexes, foreign key, `returning *`), so the report can tell Postgres's share from the service's.
 * Its rows sort after every real id and are deleted afterwards.
 */
async function customersInsertReference(db: BenchDb, accountId: string, settings: BenchSettings): Promise<PgbenchResult> {
  const script = `insert into customers (id, account_id, livemode, email, first_name, last_name, phone, company_name, notes, metadata)
values ('cus_zz' || (extract(epoch from clock_timestamp()) * 1000000)::bigint || '_' || :client_id, '${accountId}', false,
        'ref-' || :client_id || '-' || random() || '@example.com', 'Bench', 'Load', null, null, null, '{"source":"bench"}')
returning *;
`;
  const r = await pgbench({ databaseUrl: db.url, script, seconds: settings.seconds, clients: settings.connections });
  await db.sql`delete from customers where id >= 'cus_zz'`;
  await db.sql`vacuum analyze customers`;
  return r;
}

const cpu = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '' : fmtNum(n));

function row(name: string, r: LoadResult, ref: number | undefined, refName: string, target: string, ok: boolean | undefined): Array<string | number> {
  return [
    name,
    fmtNum(r.rps),
    fmtMs(r.p50),
    fmtMs(r.p99),
    r.non2xx + r.errors,
    ref === undefined ? '' : `${fmtNum(ref)} (${refName})`,
    ref === undefined ? '' : fmtRatio(r.rps, ref),
    target,
    ok === undefined ? '' : verdict(ok),
    `${cpu(r.serviceCpuUs)} / ${cpu(r.pgCpuUs)} / ${cpu(r.clientCpuUs)}`,
  ];
}

export async function run(settings: BenchSettings): Promise<void> {
  const db = await freshDatabase('customers');
  try {
    const env = await environmentNote(db.sql);
    const { accountId, key } = await createAccountKey(db.sql, 'test');
    say(`customers: seeding ${fmtNum(settings.rows)} customers`);
    const t0 = Date.now();
    const seeded = await seed(db, accountId, settings.rows);
    say(`customers: seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    say('customers: pgbench references (scratch insert, primary-key select, the API\'s own insert)');
    const insertRef = await insertReference(db, settings);
    const selectRef = await selectReference(db, settings);
    const customersRef = await customersInsertReference(db, accountId, settings);
    say(`customers: insert ref ${fmtNum(insertRef.tps)} tps, select ref ${fmtNum(selectRef.tps)} tps, customers insert ${fmtNum(customersRef.tps)} tps`);

    const svc = await startService({ suite: 'customers', databaseUrl: db.url });
    let first: LoadResult, deep: LoadResult, get: LoadResult, create: LoadResult;
    try {
      const base = { url: svc.url, key, service: svc, db };
      say('customers: GET /v1/customers?limit=10');
      first = await load({ ...base, path: '/v1/customers?limit=10' }, settings);
      say(`customers: GET /v1/customers?limit=10&starting_after=<${fmtNum(seeded.deepRowsDown)} rows down>`);
      deep = await load({ ...base, path: `/v1/customers?limit=10&starting_after=${seeded.deepCursor}` }, settings);
      say('customers: GET /v1/customers/:id (random existing ids)');
      const ids = seeded.sample;
      get = await load(
        { ...base, path: `/v1/customers/${ids[0]}`, next: () => ({ path: `/v1/customers/${ids[Math.floor(Math.random() * ids.length)]}` }) },
        settings,
      );
      say('customers: POST /v1/customers');
      create = await load(
        {
          ...base,
          method: 'POST',
          path: '/v1/customers',
          body: '{"email":"bench-[<id>]@example.com","first_name":"Bench","last_name":"Load","metadata":{"source":"bench"}}',
          headers: { 'content-type': 'application/json' },
          idReplacement: true,
        },
        settings,
      );
    } finally {
      await svc.stop();
    }

    const createRatio = create.rps / insertRef.tps;
    const getRatio = get.rps / selectRef.tps;
    const deepRatio = deep.p50 / first.p50;
    const results = table(
      ['Measurement', 'API req/s', 'p50', 'p99', 'non-2xx', 'pgbench reference (tps)', 'Ratio', 'Target', 'Result', 'CPU µs/request: service / Postgres / autocannon'],
      [
        row('`POST /v1/customers`', create, insertRef.tps, 'insert', `≥ ${TARGETS.create}`, createRatio >= TARGETS.create),
        row('`GET /v1/customers/:id`', get, selectRef.tps, 'pk select', `≥ ${TARGETS.get}`, getRatio >= TARGETS.get),
        row('`GET /v1/customers?limit=10` (first page)', first, undefined, '', '', undefined),
        row(`… \`&starting_after=\` ${fmtNum(seeded.deepRowsDown)} rows down`, deep, undefined, '', `p50 ≤ ${TARGETS.deepPage} × first page`, deepRatio <= TARGETS.deepPage),
      ],
    );
    const refs = table(
      ['pgbench (50 clients, prepared)', 'tps', 'mean latency'],
      [
        ['reference: single-row insert into a scratch table', fmtNum(insertRef.tps), fmtMs(insertRef.latencyMs)],
        [`reference: primary-key select, scratch table of ${fmtNum(settings.rows)} rows`, fmtNum(selectRef.tps), fmtMs(selectRef.latencyMs)],
        ['diagnostic: the API\'s own insert into `customers` (indexes, foreign key, `returning *`)', fmtNum(customersRef.tps), fmtMs(customersRef.latencyMs)],
      ],
    );
    const note = serviceEnvNote();
    await writeSection(
      'customers',
      `## Customers

${env}.
${fmtNum(settings.rows)} customers of one account in test mode; ${settings.connections} connections, ${settings.seconds} s per
measurement after a short warm-up; the service is \`node src/main.ts\` (web and workers in one process, default
configuration, LOG_LEVEL info) on the same machine as autocannon and PostgreSQL.${note ? `\n\n${note}` : ''}

${results}

Ratios: create ${createRatio.toFixed(2)} of the insert reference (target ≥ ${TARGETS.create}); get ${getRatio.toFixed(2)} of the
select reference (target ≥ ${TARGETS.get}); deep page p50 ${deepRatio.toFixed(2)} × the first page's (target ≤ ${TARGETS.deepPage}).
Postgres itself makes the API's insert at ${fmtRatio(customersRef.tps, insertRef.tps)} × the scratch insert rate; the API creates
customers at ${fmtRatio(create.rps, customersRef.tps)} × that.

${refs}

CPU per request is measured from /proc: the service process, the Postgres backends of the bench database,
and this process (autocannon); the three share the machine's cores.

Reproduce: \`BENCH_ROWS=${settings.rows} BENCH_SECONDS=${settings.seconds} npm run bench -- customers\`.`,
    );
    say(`customers: create ${createRatio.toFixed(2)} × insert ref, get ${getRatio.toFixed(2)} × select ref, deep/first p50 ${deepRatio.toFixed(2)}`);
  } finally {
    await db.close();
  }
}
