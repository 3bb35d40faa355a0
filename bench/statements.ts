// Which SQL statements the service runs per request on the floors' endpoints (issue 28.2, second
// round), its background work included: the service (web and workers in one process, as the floors
// bench runs it) on a database of its own with `log_statement = all` set for that database only,
// BENCH_STMT_REQUESTS requests per endpoint (default 2,000) at 10 in flight, then a few seconds for
// the workers' sweeps to catch up; the statements are read back from the Postgres server's log and
// counted per request, grouped by their text (the first 110 characters, whitespace folded). The floors
// run exactly one statement per request on these endpoints (bench/support/floor-server.ts), so every
// other line is the service's own. Needs the server's log readable at BENCH_PG_LOG (default Debian's
// /var/log/postgresql/postgresql-15-main.log) and `log_line_prefix` naming the database (`%d`).
// `npm run bench -- statements`; prints its table (nothing written to bench/RESULTS.md).
import { openSync, readSync, statSync, closeSync } from 'node:fs';
import { newId } from '../src/lib/ids.ts';
import { createAccountKey, dropBenchDatabase, freshDatabase, processCpuSeconds, say, sleep, startService, type BenchSettings } from './lib.ts';

const LOG = process.env.BENCH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';

function readFrom(file: string, offset: number): string {
  const size = statSync(file).size;
  const buf = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, offset);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

/** The statements of one database in a slice of the log: `LOG:  statement: …` and `LOG:  execute <name>: …`. */
function statements(text: string, db: string): string[] {
  const out: string[] = [];
  // A record starts with the timestamp of log_line_prefix; continuation lines start with a tab.
  const records = text.split(/\n(?=\d{4}-\d\d-\d\d )/);
  for (const r of records) {
    if (!r.includes(`@${db} `)) continue;
    const m = /LOG:\s+(?:statement|execute [^:]*):\s([\s\S]*)/.exec(r);
    if (!m) continue;
    const body = m[1]!.split(/\n\S/)[0]!; // up to a DETAIL/other record line
    out.push(body.replace(/\s+/g, ' ').trim().slice(0, 110));
  }
  return out;
}

async function many(n: number, inFlight: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

export async function run(_settings: BenchSettings): Promise<void> {
  const n = Number(process.env.BENCH_STMT_REQUESTS ?? 2000);
  const db = await freshDatabase('statements');
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  // Seeded as a deployment at rest: every customer already has its processor twin.
  const ids = Array.from({ length: 1000 }, () => newId('cus'));
  await db.sql`
    insert into customers (id, account_id, livemode, email, first_name, last_name, processor_customer_id)
    select id, ${accountId}, false, id || '@example.com', 'Seeded', 'Customer', 'pcus_seeded' from unnest(${ids}::text[]) as t(id)`;
  await db.sql`alter database ${db.sql(db.name)} set log_statement = 'all'`;
  const svc = await startService({ suite: 'statements', databaseUrl: db.url });
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(svc.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
    };
    await call('POST', '/v1/payment-links', { amount: 2500, currency: 'usd', name: 'Floor', slug: 'floor-page' });
    const sessionBody = { currency: 'usd', success_url: 'https://merchant.example/thanks', line_items: [{ name: 'Teapot', quantity: 1, amount: 3200 }] };
    const endpoints: Array<[string, (i: number) => Promise<void>]> = [
      ['idle (per second, no requests)', async () => {}],
      ['GET /v1/customers/:id', (i) => call('GET', `/v1/customers/${ids[i % ids.length]}`)],
      ['GET /v1/customers', () => call('GET', '/v1/customers')],
      ['GET /l/:slug', async () => void (await (await fetch(`${svc.url}/l/floor-page`)).arrayBuffer())],
      ['POST /v1/customers', () => call('POST', '/v1/customers', { email: `s-${newId('cus')}@example.com`, first_name: 'New', last_name: 'Customer' })],
      ['POST /v1/checkout/sessions', () => call('POST', '/v1/checkout/sessions', sessionBody)],
    ];
    await sleep(3000); // start-up's own statements out of the way
    for (const [name, one] of endpoints) {
      const from = statSync(LOG).size;
      const t0 = Date.now();
      const cpu0 = processCpuSeconds(svc.pid);
      if (name.startsWith('idle')) await sleep(10_000);
      else await many(n, 10, one);
      await sleep(3000); // the sweeps of what was just made (processor twins: every second)
      const seconds = (Date.now() - t0) / 1000;
      const cpuMs = (processCpuSeconds(svc.pid) - cpu0) * 1000;
      const per = name.startsWith('idle') ? seconds : n;
      const counts = new Map<string, number>();
      for (const s of statements(readFrom(LOG, from), db.name)) counts.set(s, (counts.get(s) ?? 0) + 1);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      say(`statements: ${name}: ${(total / per).toFixed(2)} per ${name.startsWith('idle') ? 'second' : 'request'} (${seconds.toFixed(1)} s; the service process used ${(cpuMs / seconds).toFixed(1)} ms of CPU a second)`);
      for (const [s, c] of [...counts].sort((a, b) => b[1] - a[1])) {
        if (c / per >= 0.005) say(`  ${(c / per).toFixed(3)}  ${s}`);
      }
    }
  } finally {
    await svc.stop();
    await db.close();
    await dropBenchDatabase(db.name);
  }
}
