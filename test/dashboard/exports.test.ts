import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { header } from '../../src/exports/columns.ts';
import { exportsWorker } from '../../workers/exports.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { signedIn, type DashClient } from './client.ts';

const t = useTestServer({ workers: [exportsWorker] });

describe('exports in the dashboard', () => {
  let accountId = '';
  let key = '';
  let payment = '';
  const clients = new Map<string, DashClient>();
  const as = async (role: string): Promise<DashClient> => {
    if (clients.has(role)) return clients.get(role)!;
    const email = `${role}@tearoom.example`;
    const c = await signedIn(t, accountId, email);
    await t.sql`update dashboard_users set role = ${role} where account_id = ${accountId} and email = ${email}`;
    clients.set(role, c);
    return c;
  };
  const today = new Date().toISOString().slice(0, 10);
  /** The newest run's file link on the exports page, once its file is written. */
  const fileLink = (c: DashClient) =>
    eventually(async () => /href="(\/dashboard\/exports\/runs\/exr_[a-z0-9]+\/file)"/.exec((await c.get('/dashboard/exports')).html)?.[1], 20_000, 100);

  beforeAll(async () => {
    const a = await t.account();
    accountId = a.accountId;
    key = a.test;
    const cs = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 4000, currency: 'eur', success_url: 'https://example.com/ok' } });
    await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key, body: { card: '4242424242424242', email: 'ada@example.com', name: '=1+1' } });
    const [row] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.body.id}`;
    payment = row!.id;
  });

  it('when an analyst starts an export of payments for a range of UTC days, then the run is listed and its file is the CSV of this mode, read by a CSV parser', async () => {
    const c = await as('analyst');
    expect((await c.get('/dashboard/exports')).status).toBe(200);
    const started = await c.post('/dashboard/exports', { dataset: 'payments', from: today, to: today, status: 'succeeded' });
    expect(started.status).toBe(303);
    expect(started.headers.get('location')).toBe('/dashboard/exports?done=started');
    const link = await fileLink(c);
    const res = await c.get(link);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="payments-test-${today}-to-${new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10)}.csv"`);
    const rows = parse(res.html, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0]!)).toEqual(header('payments'));
    expect(rows.map((r) => [r.id, r.billing_name])).toEqual([[payment, "'=1+1"]]);
    const [run] = await t.sql<{ filters: object; livemode: boolean }[]>`select filters, livemode from export_runs where account_id = ${accountId}`;
    expect(run).toEqual({ livemode: false, filters: { created_gte: Date.parse(today) / 1000, created_lt: Date.parse(today) / 1000 + 86_400, status: 'succeeded' } });
  });

  it('when support asks for the export page, starts an export or asks for a file, then each is refused with a 403 and no data', async () => {
    const c = await as('support');
    const page = await c.get('/dashboard/exports');
    expect(page.status).toBe(403);
    const [run] = await t.sql<{ id: string }[]>`select id from export_runs where account_id = ${accountId} limit 1`;
    const file = await c.get(`/dashboard/exports/runs/${run!.id}/file`);
    expect(file.status).toBe(403);
    expect(file.html).not.toContain(payment);
    const owner = await as('owner');
    await owner.get('/dashboard/exports');
    c.token = owner.token; // a valid form token would not help: the role is checked first
    expect((await c.post('/dashboard/exports', { dataset: 'payments' })).status).toBe(403);
  });

  it('when the form is wrong, then the page says which field, with a 400, and no run is made', async () => {
    const c = await as('owner');
    await c.get('/dashboard/exports');
    const [before] = await t.sql<{ n: number }[]>`select count(*)::int as n from export_runs`;
    const bad = await c.post('/dashboard/exports', { dataset: 'customers', status: 'OPEN' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('id="status-error"');
    const reversed = await c.post('/dashboard/exports', { dataset: 'payments', from: '2026-02-01', to: '2026-01-01' });
    expect(reversed.status).toBe(400);
    expect(reversed.html).toContain('id="created_lt-error"');
    const unknown = await c.post('/dashboard/exports', { dataset: 'api-keys' });
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('id="dataset-error"');
    const [after] = await t.sql<{ n: number }[]>`select count(*)::int as n from export_runs`;
    expect(after!.n).toBe(before!.n);
  });

  it("when a file of another account's run, or of the other mode, is asked, then 404", async () => {
    const c = await as('owner');
    const [run] = await t.sql<{ id: string }[]>`select id from export_runs where account_id = ${accountId} and status = 'SUCCEEDED' limit 1`;
    await t.sql`update export_runs set livemode = true where id = ${run!.id}`;
    expect((await c.get(`/dashboard/exports/runs/${run!.id}/file`)).status).toBe(404);
    await t.sql`update export_runs set livemode = false where id = ${run!.id}`;
    expect((await c.get(`/dashboard/exports/runs/${run!.id}/file`)).status).toBe(200);
    expect((await c.get('/dashboard/exports/runs/exr_unknown/file')).status).toBe(404);
  });
});
