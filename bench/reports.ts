// The reports benchmark (issue 27, point 3): the reports page and GET /v1/reports/summary at a
// million payments, answered from the rollups; the same figures computed by scanning the payments
// in the same run are the reference.
import type postgres from 'postgres';
import { insertSession } from '../src/dashboard/store.ts';
import { shellPage } from '../src/dashboard/layout.ts';
import { reportsPage } from '../src/dashboard/reports/views.ts';
import { buildReport, reportRange } from '../src/reports/service.ts';
import { reportCurrencies, rebuildReports } from '../src/reports/store.ts';
import { createAccountKey, dropBenchDatabase, environmentNote, fmtMs, fmtNum, keepDatabase, load, seededDatabase, say, serviceEnvNote, startService, table, verdict, writeSection, type BenchSettings, type LoadResult } from './lib.ts';

const TARGET_MS = 200;
const SAMPLES = 200;
const DAYS = 365;
/** In-process renders of the year-by-week page's view. */
const VIEW_RUNS = 300;

/** Milliseconds of `n` calls of `f` one after another, sorted. */
async function timings(n: number, f: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** `rows` payments of one account over the last year (3 currencies, 1 in 7 failed), 5 % refunded, 0.5 % disputed. */
async function seed(sql: postgres.Sql, accountId: string, rows: number): Promise<void> {
  const batch = 200_000;
  for (let from = 1; from <= rows; from += batch) {
    const to = Math.min(rows, from + batch - 1);
    await sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, failure_code, succeeded_at, failed_at, created_at, email, card_last4)
      select 'pay_bench' || lpad(g::text, 8, '0'), ${accountId}, false, case when g % 7 = 0 then 'FAILED' else 'SUCCEEDED' end,
        500 + (g::bigint * 7919) % 20000, (array['eur', 'usd', 'gbp'])[1 + g % 3],
        case when g % 7 = 0 then (array['card_declined', 'insufficient_funds', 'expired_card', 'incorrect_cvc', 'authentication_abandoned'])[1 + (g / 7) % 5] end,
        case when g % 7 <> 0 then at end, case when g % 7 = 0 then at end, at, 'payer' || g % 5000 || '@example.com', lpad((g % 10000)::text, 4, '0')
      from (select g, now() - ((g::float8 / ${rows}) * ${DAYS}) * interval '1 day' as at from generate_series(${from}::int, ${to}::int) g) s`;
  }
  await sql`
    insert into refunds (id, account_id, livemode, payment_id, amount_cents, currency, status, created_at, updated_at)
    select 're_' || id, account_id, false, id, amount_cents / 2, currency, 'SUCCEEDED', succeeded_at, succeeded_at + interval '1 hour'
    from payments where account_id = ${accountId} and status = 'SUCCEEDED' and (substr(id, 10)::int) % 20 = 1`;
  await sql`
    insert into disputes (id, account_id, livemode, payment_id, processor_dispute_id, processor_created_at, amount_cents, currency, reason, status, evidence_due_by, closed_at, created_at)
    select 'dp_' || id, account_id, false, id, 'dp_sim_' || id, succeeded_at + interval '2 days', amount_cents, currency, 'fraudulent',
      case when (substr(id, 10)::int) % 400 = 3 then 'LOST' else 'NEEDS_RESPONSE' end, succeeded_at + interval '9 days',
      case when (substr(id, 10)::int) % 400 = 3 then succeeded_at + interval '20 days' end, succeeded_at + interval '2 days'
    from payments where account_id = ${accountId} and status = 'SUCCEEDED' and (substr(id, 10)::int) % 200 = 3 and succeeded_at < now() - interval '20 days'`;
  await sql.begin((tx) => rebuildReports(tx, accountId));
  await sql`vacuum analyze payments, refunds, disputes, report_daily, report_declines`;
}

/** The same 30-day figures as the summary, computed by scanning the payments: what a report without rollups costs. */
const scanQuery = (sql: postgres.Sql, accountId: string) => sql`
  select currency, (coalesce(succeeded_at, failed_at) at time zone 'utc')::date as day,
    sum(amount_cents) filter (where status = 'SUCCEEDED') as gross, count(*) filter (where status = 'SUCCEEDED') as ok, count(*) filter (where status = 'FAILED') as failed
  from payments
  where account_id = ${accountId} and livemode = false and coalesce(succeeded_at, failed_at) >= now() - interval '30 days'
  group by 1, 2`;

export async function run(settings: BenchSettings): Promise<void> {
  // BENCH_KEEP_DB=1 keeps the seeded database for the next run (bench/support/base.ts, seededDatabase).
  const { db, info } = await seededDatabase('reports', `${settings.rows} payments`, async (fresh) => {
    const { accountId, key } = await createAccountKey(fresh.sql, 'test');
    say(`reports: seeding ${fmtNum(settings.rows)} payments over ${DAYS} days, their refunds and disputes, and the rollups`);
    const t0 = Date.now();
    await seed(fresh.sql, accountId, settings.rows);
    return { accountId, key, seedS: (Date.now() - t0) / 1000 };
  });
  try {
    const env = await environmentNote(db.sql);
    const { accountId, key, seedS } = info;
    const [counts] = await db.sql<{ payments: string; refunds: string; disputes: string; daily: string; declines: string }[]>`
      select (select count(*) from payments)::text as payments, (select count(*) from refunds)::text as refunds, (select count(*) from disputes)::text as disputes,
        (select count(*) from report_daily)::text as daily, (select count(*) from report_declines)::text as declines`;
    say(`reports: seeded in ${seedS.toFixed(1)} s: ${JSON.stringify(counts)}`);

    const [user] = await db.sql<{ id: string }[]>`insert into dashboard_users (id, account_id, email, role) values ('du_bench', ${accountId}, 'bench@example.com', 'analyst')
      on conflict (id) do update set role = excluded.role returning id`;
    const cookie = `dash_session=${await insertSession(db.sql, user!.id, false)}`;

    say('reports: the reference, the 30 days computed by scanning payments (SQL, sequential)');
    await scanQuery(db.sql, accountId);
    const scan = await timings(20, () => scanQuery(db.sql, accountId));

    // The year by week page's view alone, in this process (no HTTP, no SQL): the report read once, then
    // the page (shell included) rendered VIEW_RUNS times; what the render costs of the page's time.
    const yearAgo = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
    const owner = { accountId, livemode: false };
    const yearRange = reportRange({ interval: 'week', from: yearAgo });
    const yearReport = await buildReport(db.sql, owner, yearRange);
    const form = { interval: 'week', from: yearRange.from, to: yearRange.to, currency: '', currencies: await reportCurrencies(db.sql, owner), error: null };
    const session = { token_hash: Buffer.alloc(32), user_id: 'du_bench', account_id: accountId, email: 'bench@example.com', role: 'analyst' as const, business_name: 'Bench', livemode: false, created_at: new Date(), last_seen_at: new Date() };
    const renderPage = () => shellPage(session, 'csrf', '/dashboard/assets/app.js', reportsPage({ form, report: yearReport, canDownload: true }));
    const pageBytes = Buffer.byteLength(renderPage());
    for (let i = 0; i < 20; i++) renderPage();
    const view = await timings(VIEW_RUNS, async () => renderPage());

    const svc = await startService({ suite: 'reports', databaseUrl: db.url });
    const pages: Array<[string, string, Record<string, string>]> = [
      ['`GET /v1/reports/summary` (30 days)', '/v1/reports/summary', { authorization: `Bearer ${key}` }],
      ['`GET /v1/reports/summary?interval=month` (12 months)', '/v1/reports/summary?interval=month', { authorization: `Bearer ${key}` }],
      ['Reports page `/dashboard/reports` (30 days)', '/dashboard/reports', { cookie }],
      ['Reports page `?interval=week&from=<a year ago>`', `/dashboard/reports?interval=week&from=${new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10)}`, { cookie }],
    ];
    const sequential: number[][] = [];
    const loaded: LoadResult[] = [];
    try {
      for (const [name, path, headers] of pages) {
        const check = await fetch(`${svc.url}${path}`, { headers });
        if (check.status !== 200) throw new Error(`${path}: ${check.status} ${(await check.text()).slice(0, 300)}`);
        await check.arrayBuffer().catch(() => undefined);
        say(`reports: ${name}: ${SAMPLES} requests one after another`);
        sequential.push(await timings(SAMPLES, async () => (await fetch(`${svc.url}${path}`, { headers })).arrayBuffer()));
      }
      for (const [name, path, headers] of [pages[0]!, pages[2]!]) {
        say(`reports: ${name}: ${settings.connections} connections, ${settings.seconds} s`);
        loaded.push(await load({ url: svc.url, path, headers, service: svc, db }, settings));
      }
    } finally {
      await svc.stop();
    }

    const scanP95 = pct(scan, 95);
    const rows = pages.map(([name], i) => {
      const s = sequential[i]!;
      return [name, fmtMs(pct(s, 50)), fmtMs(pct(s, 95)), fmtMs(pct(s, 99)), `${(scanP95 / pct(s, 95)).toFixed(1)} ×`, `p95 < ${TARGET_MS} ms`, verdict(pct(s, 95) < TARGET_MS)];
    });
    const results = table(['Request (one client, sequential)', 'p50', 'p95', 'p99', 'Scan reference p95 ÷ this p95', 'Target', 'Result'], rows);
    const under = table(
      [`Under load (${settings.connections} connections, ${settings.seconds} s)`, 'req/s', 'p50', 'p99', 'non-2xx'],
      [
        [pages[0]![0], fmtNum(loaded[0]!.rps), fmtMs(loaded[0]!.p50), fmtMs(loaded[0]!.p99), loaded[0]!.non2xx + loaded[0]!.errors],
        [pages[2]![0], fmtNum(loaded[1]!.rps), fmtMs(loaded[1]!.p50), fmtMs(loaded[1]!.p99), loaded[1]!.non2xx + loaded[1]!.errors],
      ],
    );
    const note = serviceEnvNote();
    await writeSection(
      'reports',
      `## Reports (issue 27, point 3)

${env}.
${fmtNum(Number(counts!.payments))} payments of one account in test mode over ${DAYS} days (eur, usd, gbp; 1 in 7 failed, with five
failure codes), ${fmtNum(Number(counts!.refunds))} refunds and ${fmtNum(Number(counts!.disputes))} disputes, seeded through SQL in a database of
its own (\`payments_bench_reports\`, ${keepDatabase() ? 'kept for the next run (BENCH_KEEP_DB=1)' : 'dropped afterwards'}), then the rollups rebuilt from them (\`rebuildReports\`, the migration's
backfill for one account): ${fmtNum(Number(counts!.daily))} daily rows and ${fmtNum(Number(counts!.declines))} decline rows. Seeding took ${seedS.toFixed(0)} s.
The service is \`node src/main.ts\` (default configuration); the dashboard requests carry an analyst's session.${note ? `\n\n${note}` : ''}

${results}

The year-by-week page's view alone (\`reportsPage\` in the shell, in process, no HTTP and no SQL; ${yearReport.currencies.length} currencies × ${yearReport.currencies[0]?.periods.length ?? 0} weeks,
${fmtNum(pageBytes / 1024)} KB of HTML), ${VIEW_RUNS} renders: p50 ${fmtMs(pct(view, 50))}, p95 ${fmtMs(pct(view, 95))}.

Reference, measured in the same run: the 30 days' gross and counts computed by scanning the payments in SQL (no service,
no HTTP), p50 ${fmtMs(pct(scan, 50))}, p95 ${fmtMs(scanP95)} over 20 runs. The rollups answer the same question from
about 90 rows per 30 days, whatever the number of payments.

${under}

Reproduce: \`BENCH_ROWS=${settings.rows} BENCH_SECONDS=${settings.seconds} npm run bench -- reports\`.`,
    );
  } finally {
    await db.close();
    if (!keepDatabase()) await dropBenchDatabase(db.name);
  }
}
