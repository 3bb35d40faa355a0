// The payment links benchmark (issue 4, point 7): page views per second on the public link page
// at 50 connections, and how long after the load stops view_count is exact.
// `npm run bench -- links`; BENCH_SECONDS sets the length of the measurement (default 10).
import autocannon from 'autocannon';
import {
  createAccountKey,
  environmentNote,
  fmtMs,
  fmtNum,
  freshDatabase,
  load,
  say,
  serviceEnvNote,
  startService,
  table,
  verdict,
  writeSection,
  type BenchSettings,
} from './lib.ts';

/** Issue 4: counters converge within 2 s under normal load. */
const CONVERGE_TARGET_MS = 2000;
const CONVERGE_GIVE_UP_MS = 120_000;

async function api(url: string, key: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function run(settings: BenchSettings): Promise<void> {
  const db = await freshDatabase('links');
  const env = await environmentNote(db.sql);
  const { key } = await createAccountKey(db.sql, 'test');
  const svc = await startService({ suite: 'links', databaseUrl: db.url });
  try {
    const page = { amount: 2500, currency: 'usd', description: 'Benchmark page', collect_email: true, collect_name: true };
    const warm = await api(svc.url, key, '/v1/payment-links', { ...page, name: 'Warm-up', slug: 'bench-warm-up' });
    const link = await api(svc.url, key, '/v1/payment-links', { ...page, name: 'Measured', slug: 'bench-measured' });

    say(`links: warming up on ${warm.url}`);
    const w = await load({ url: svc.url, path: '/l/bench-warm-up', warmupSeconds: 0 }, { ...settings, seconds: Math.min(3, settings.seconds) });
    // A fixed number of loads (about settings.seconds at the warm-up's pace), every one answered
    // before the run ends, so the exact number of views to expect is known.
    const expected = Math.max(1000, Math.round(w.rps * settings.seconds));
    say(`links: ${fmtNum(expected)} page loads on ${link.url}?src=QR, ${settings.connections} connections`);
    const cpu0 = svc.cpuSeconds();
    const started = Date.now();
    const r = await autocannon({ url: `${svc.url}/l/bench-measured?src=QR`, connections: settings.connections, amount: expected });
    const stopped = Date.now();
    const rps = (r.requests.total * 1000) / (stopped - started);
    const cpuUs = ((svc.cpuSeconds() - cpu0) * 1e6) / r.requests.total;
    const ok = r['2xx'];

    let seen = -1;
    let convergedMs = Number.NaN;
    while (Date.now() - stopped < CONVERGE_GIVE_UP_MS) {
      const [row] = await db.sql<{ view_count: number }[]>`select view_count::int as view_count from payment_links where id = ${link.id}`;
      seen = row!.view_count;
      if (seen >= expected) {
        convergedMs = Date.now() - stopped;
        break;
      }
      await new Promise((res) => setTimeout(res, 10));
    }
    const [rows] = await db.sql<{ n: number; records: number }[]>`
      select coalesce(sum(views), 0)::int as n, count(*)::int as records from payment_link_views where payment_link_id = ${link.id}`;
    const exact = seen === expected && rows!.n === expected;
    say(`links: ${fmtNum(rps)} views/s, view_count ${fmtNum(seen)} of ${fmtNum(expected)} after ${convergedMs} ms`);

    const note = serviceEnvNote();
    await writeSection(
      'links',
      `## Payment links

${env}.
One MULTI link collecting name and email; autocannon GETs \`/l/<slug>?src=QR\` with
${settings.connections} connections (${fmtNum(expected)} loads, about ${settings.seconds} s) after a separate warm-up on another link; the service is
\`node src/main.ts\` (web and workers in one process, default configuration, LOG_LEVEL info) on the same
machine as autocannon, PostgreSQL and Redis.${note ? `\n${note}` : ''}

${table(
  ['Measurement', 'Value', 'Target', 'Result'],
  [
    ['Page views per second', fmtNum(rps), '', ''],
    ['Latency p50 / p99', `${fmtMs(r.latency.p50)} / ${fmtMs(r.latency.p99)}`, '', ''],
    ['Service CPU per page view', `${fmtNum(cpuUs)} µs`, '', ''],
    ['Page loads answered 2xx, of those sent', `${fmtNum(ok)} of ${fmtNum(expected)}`, 'all', verdict(ok === expected && r.errors + r.timeouts === 0)],
    ['view_count and the views of its rows once settled', `${fmtNum(seen)} / ${fmtNum(rows!.n)}`, 'equal to the loads', verdict(exact)],
    ['View rows written (one per link, source and batch)', fmtNum(rows!.records), '', ''],
    ['Time from the end of the load until view_count is exact', Number.isNaN(convergedMs) ? 'not within 120 s' : `${fmtNum(convergedMs)} ms`, `≤ ${CONVERGE_TARGET_MS} ms`, verdict(convergedMs <= CONVERGE_TARGET_MS)],
  ],
)}

A page load adds one to its link and source's record in an in-process buffer and answers; the
buffer leaves as one \`link-counters\` job per 500 records or 250 ms, and the worker inserts one row
per record (its \`views\` the loads it counts) with \`unnest\` and adds only the views of the rows it
inserted to \`view_count\`.

Reproduce: \`BENCH_SECONDS=${settings.seconds} npm run bench -- links\`.`,
    );
  } finally {
    await svc.stop();
    await db.close();
  }
}
