import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { header } from '../../src/exports/columns.ts';
import { EXPORT_MAX_ATTEMPTS } from '../../src/exports/jobs.ts';
import { reconcileExports, runExportJob } from '../../src/exports/run.ts';
import { runRetention } from '../../src/retention/service.ts';
import { exportsWorker } from '../../workers/exports.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

const t = useTestServer({ workers: [exportsWorker], env: { EXPORT_STREAM_MAX_ROWS: '5000', EXPORT_LINK_TTL_SECONDS: '600' } });

const N = 12_000;

describe('export runs', () => {
  let key = '';
  let accountId = '';
  let otherKey = '';

  const done = async (id: string, k = key) =>
    eventually(async () => {
      const res = await t.request('GET', `/v1/exports/payments/runs/${id}`, { key: k });
      return res.body.status === 'SUCCEEDED' || res.body.status === 'FAILED' ? res.body : null;
    }, 30_000);
  const download = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, length: res.headers.get('content-length'), text: await res.text() };
  };
  /** A run made straight in the table, as the API makes it, without its job (the enqueue lost). */
  const orphanRun = async (status = 'PENDING', attempts = 0) => {
    const [row] = await t.sql<{ id: string }[]>`
      insert into export_runs (id, account_id, livemode, dataset, filters, status, attempts, link_key, created_at, expires_at)
      values ('exr_' || substr(md5(random()::text), 1, 26), ${accountId}, false, 'payments', '{}', ${status}, ${attempts},
        decode(md5(random()::text) || md5(random()::text), 'hex'), now() - interval '5 minutes', now() + interval '7 days')
      returning id`;
    return row!.id;
  };

  beforeAll(async () => {
    const a = await t.account();
    key = a.test;
    accountId = a.accountId;
    otherKey = (await t.account()).test;
    // Names a spreadsheet would run, and text that needs quoting, every 1,000 rows.
    await t.sql.begin(async (tx) => {
      await tx`set local statement_timeout = 0`;
      await tx`
        insert into payments (id, account_id, livemode, status, amount_cents, currency, email, billing_name, card_last4, created_at)
        select 'pay_runs' || lpad(i::text, 9, '0'), ${accountId}, false, 'SUCCEEDED', 1 + i % 9999, (array['eur','jpy','kwd'])[1 + i % 3],
          'payer' || i || '@example.com',
          case when i % 1000 = 1 then '=HYPERLINK("http://evil.example",' || i || ')' when i % 1000 = 2 then 'Lovelace, "Ada"' || chr(10) || i else 'Payer ' || i end,
          '4242', timestamptz '2026-03-01T00:00:00Z' + (i || ' seconds')::interval
        from generate_series(1, ${N}) i`;
    });
  }, 60_000);

  it('when a run of payments is made, then a worker writes the file and its signed link downloads the whole CSV, read by a real parser', async () => {
    const made = await t.request('POST', '/v1/exports/payments/runs', { key, body: { created_gte: 1772323200, status: 'succeeded' } });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ object: 'export_run', dataset: 'payments', status: 'PENDING', url: null, filters: { created_gte: 1772323200, status: 'succeeded' } });
    const run = await done(made.body.id);
    expect(run).toMatchObject({ status: 'SUCCEEDED', row_count: N });
    expect(run.url_expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(590);
    expect(run.url).toMatch(new RegExp(`^${t.url}/files/export-runs/${run.id}\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    const file = await download(run.url);
    expect(file.status).toBe(200);
    expect(Number(file.length)).toBe(run.size);
    expect(Buffer.byteLength(file.text)).toBe(run.size);
    const rows = parse(file.text, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0]!)).toEqual(header('payments'));
    expect(rows).toHaveLength(N);
    expect(rows[0]).toMatchObject({ id: 'pay_runs000000001', billing_name: `'=HYPERLINK("http://evil.example",1)`, amount_cents: '2', amount: '2', currency: 'jpy' });
    expect(rows[1]).toMatchObject({ billing_name: 'Lovelace, "Ada"\n2', amount: '0.003', currency: 'kwd' });
    expect(rows.filter((r) => r.billing_name!.startsWith("'=")).length).toBe(N / 1000);
    // More than one chunk, stored for the current attempt only.
    const [chunks] = await t.sql<{ n: number; tokens: number }[]>`select count(*)::int as n, count(distinct run_token)::int as tokens from export_chunks where export_run_id = ${run.id}`;
    expect(chunks).toEqual({ n: expect.any(Number), tokens: 1 });
    expect(chunks!.n).toBeGreaterThan(1);
  });

  it('when a link is changed, expired, or a run is asked by another account, then 404 and no data', async () => {
    const run = await done((await t.request('POST', '/v1/exports/payments/runs', { key, body: { status: 'FAILED' } })).body.id);
    expect(run).toMatchObject({ status: 'SUCCEEDED', row_count: 0 });
    const ok = await download(run.url);
    expect(ok.text).toBe(`${header('payments').join(',')}\r\n`);
    const u = new URL(run.url);
    const expires = Number(u.searchParams.get('expires'));
    const sig = u.searchParams.get('signature')!;
    const tampered = [
      `${u.origin}${u.pathname}?expires=${expires + 3600}&signature=${sig}`,
      `${u.origin}${u.pathname}?expires=${expires}&signature=${sig.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`,
      `${u.origin}${u.pathname}?expires=${expires}`,
      `${u.origin}/files/export-runs/exr_nope?expires=${expires}&signature=${sig}`,
    ];
    for (const link of tampered) {
      const res = await download(link);
      expect(res.status, link).toBe(404);
      expect(res.text).not.toContain('payer');
    }
    // The run's key signs a link that expired a second ago: refused.
    await t.sql`update export_runs set link_key = link_key where id = ${run.id}`;
    const { signedLink } = await import('../../src/exports/link.ts');
    const [row] = await t.sql<{ id: string; account_id: string; livemode: boolean; link_key: Buffer }[]>`select id, account_id, livemode, link_key from export_runs where id = ${run.id}`;
    expect((await download(signedLink(t.url, row!, Math.floor(Date.now() / 1000) - 1))).status).toBe(404);
    expect((await download(signedLink(t.url, row!, Math.floor(Date.now() / 1000) + 60))).status).toBe(200);
    expect((await t.request('GET', `/v1/exports/payments/runs/${run.id}`, { key: otherKey })).status).toBe(404);
    expect((await t.request('GET', `/v1/exports/payments/runs/${run.id}`, { key: await t.key(accountId, 'live') })).status).toBe(404);
    expect((await t.request('GET', `/v1/exports/refunds/runs/${run.id}`, { key })).status).toBe(404);
  });

  it('when a GET export holds more rows than EXPORT_STREAM_MAX_ROWS, then a 400 points to a run; a narrow range still streams', async () => {
    const big = await t.request('GET', '/v1/exports/payments', { key });
    expect(big.status).toBe(400);
    expect(big.body.error).toMatchObject({ code: 'resource_limit_reached', param: 'created_gte' });
    expect(big.body.error.message).toContain('/v1/exports/payments/runs');
    const narrow = await t.request('GET', `/v1/exports/payments?created_lt=${Date.parse('2026-03-01T00:16:40Z') / 1000}`, { key });
    expect(narrow.status).toBe(200);
    expect(parse(narrow.body as string, { columns: true })).toHaveLength(999);
  });

  it.each([
    [{ created_gte: 'yesterday' }, 'created_gte'],
    [{ created_gte: 20, created_lt: 10 }, 'created_lt'],
    [{ status: 'LOST' }, 'status'],
    [{ format: 'xlsx' }, 'format'],
  ])('when a run is asked with %j, then a 400 names %s', async (body, param) => {
    const res = await t.request('POST', '/v1/exports/payments/runs', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it('when a run lost its job (Redis flushed) or its worker was killed mid-file, then the reconciler enqueues it again and one whole file is written', async () => {
    const lost = await orphanRun();
    // A killed worker's attempt: RUNNING, one attempt spent, half a file of its own token left behind.
    const killed = await orphanRun('RUNNING', 1);
    await t.sql`update export_runs set run_token = 'dead' where id = ${killed}`;
    await t.sql`insert into export_chunks (export_run_id, run_token, seq, data) values (${killed}, 'dead', 0, ${Buffer.from('id,half a file\r\n')})`;
    expect(await reconcileExports(t.s)).toBe(2);
    for (const id of [lost, killed]) {
      const run = await done(id);
      expect(run).toMatchObject({ status: 'SUCCEEDED', row_count: N });
      const text = (await download(run.url)).text;
      expect(text.startsWith(`${header('payments').join(',')}\r\n`)).toBe(true);
      expect(parse(text, { columns: true })).toHaveLength(N);
    }
    const [left] = await t.sql<{ n: number }[]>`select count(*)::int as n from export_chunks where export_run_id = ${killed} and run_token = 'dead'`;
    expect(left!.n).toBe(0);
    // Finished runs are left alone: a second pass, or the job run again, does nothing.
    expect(await reconcileExports(t.s)).toBe(0);
    expect(await runExportJob(t.s, lost)).toEqual({ skipped: 'finished or gone' });
  }, 60_000);

  it('when two attempts of one run race (a stalled worker and its replacement), then only the newer one stores and finishes the file', async () => {
    const id = await orphanRun();
    const [first, second] = await Promise.all([runExportJob(t.s, id), new Promise((r) => setTimeout(r, 20)).then(() => runExportJob(t.s, id))]);
    expect([first, second]).toContainEqual({ skipped: 'superseded' });
    const [row] = await t.sql<{ status: string; run_token: string; row_count: number }[]>`select status, run_token, row_count from export_runs where id = ${id}`;
    expect(row).toMatchObject({ status: 'SUCCEEDED', row_count: N });
    const [tokens] = await t.sql<{ n: number }[]>`select count(distinct run_token)::int as n from export_chunks where export_run_id = ${id}`;
    expect(tokens!.n).toBe(1);
  }, 60_000);

  it('when a run has used all its attempts without a job, then the reconciler fails it instead of running it again', async () => {
    const id = await orphanRun('RUNNING', EXPORT_MAX_ATTEMPTS);
    expect(await reconcileExports(t.s)).toBe(0);
    const [row] = await t.sql<{ status: string; failure_message: string }[]>`select status, failure_message from export_runs where id = ${id}`;
    expect(row!.status).toBe('FAILED');
    expect((await t.request('GET', `/v1/exports/payments/runs/${id}`, { key })).body).toMatchObject({ status: 'FAILED', url: null });
  });

  it('when a run passes its expiry, then the retention run deletes it with its file and its links stop working', async () => {
    const run = await done((await t.request('POST', '/v1/exports/payments/runs', { key, body: { status: 'PENDING' } })).body.id);
    await t.sql`update export_runs set expires_at = now() - interval '1 second' where id = ${run.id}`;
    const report = await runRetention(t.s, new Date());
    expect(report.exportRuns).toBeGreaterThanOrEqual(1);
    expect(await t.sql`select 1 from export_runs where id = ${run.id}`).toHaveLength(0);
    expect(await t.sql`select 1 from export_chunks where export_run_id = ${run.id}`).toHaveLength(0);
    expect((await download(run.url)).status).toBe(404);
  });
});
