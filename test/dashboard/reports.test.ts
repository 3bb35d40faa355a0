import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { rebuildReports } from '../../src/reports/store.ts';
import { DIGITS } from '../helpers/cards.ts';
import { useTestServer } from '../helpers/server.ts';
import { signedIn, type DashClient } from './client.ts';

const t = useTestServer();
const today = () => new Date().toISOString().slice(0, 10);

describe('the reports page in the dashboard', () => {
  let accountId = '';
  let key = '';
  const clients = new Map<string, DashClient>();
  const as = async (role: string): Promise<DashClient> => {
    const known = clients.get(role);
    if (known) return known;
    const email = `${role}@reports.example`;
    const c = await signedIn(t, accountId, email);
    await t.sql`update dashboard_users set role = ${role} where account_id = ${accountId} and email = ${email}`;
    clients.set(role, c);
    return c;
  };

  beforeAll(async () => {
    const a = await t.account();
    accountId = a.accountId;
    key = a.test;
    for (const [amount, currency, card] of [
      [4000, 'eur', DIGITS.visa],
      [1500, 'eur', DIGITS.visa],
      [2500, 'eur', DIGITS.declined],
      [1999, 'usd', DIGITS.visa],
    ] as const) {
      const cs = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount, currency, success_url: 'https://example.com/ok' } });
      await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key, body: { card, email: 'payer@example.com', name: '=cmd|calc' } });
    }
    // A failure code that a spreadsheet would run: the CSV must neutralise it.
    await t.sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, failure_code, failed_at)
      values (${`pay_formula${accountId}`}, ${accountId}, false, 'FAILED', 100, 'eur', '=HYPERLINK("x")', now())`;
    await t.sql.begin((sql) => rebuildReports(sql, accountId));
  });

  it('when an analyst opens Reports, then the totals per currency equal the sums of the payments in SQL, and each table downloads as a CSV a parser reads', async () => {
    const c = await as('analyst');
    const page = await c.get('/dashboard/reports');
    expect(page.status).toBe(200);
    const [eur] = await t.sql<{ gross: string }[]>`select sum(amount_cents)::text as gross from payments where account_id = ${accountId} and currency = 'eur' and status = 'SUCCEEDED'`;
    expect(eur!.gross).toBe('5500');
    expect(page.html).toMatch(/data-currency="eur"[\s\S]*data-stat="gross"><h3 class="stat-label">Gross volume<\/h3><p class="stat">€55\.00</);
    expect(page.html).toContain('data-chart="gross-eur"');
    expect(page.html).toContain('data-chart="declines-eur"');
    expect(page.html).toContain('href="/dashboard/reports/download?table=volume&amp;currency=eur');

    const volume = await c.get(`/dashboard/reports/download?table=volume&currency=eur&interval=day&from=${today()}&to=${today()}`);
    expect(volume.status).toBe(200);
    expect(volume.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(volume.headers.get('content-disposition')).toBe(`attachment; filename="report-volume-eur-test-day-${today()}-to-${today()}.csv"`);
    expect(parse(volume.html, { columns: true })).toEqual([
      expect.objectContaining({ period_start: today(), period_end: today(), currency: 'eur', gross_amount_cents: '5500', gross_amount: '55.00', net_amount_cents: '5500', net_amount: '55.00' }),
    ]);
    const counts = parse((await c.get(`/dashboard/reports/download?table=counts&currency=eur&from=${today()}&to=${today()}`)).html, { columns: true });
    expect(counts).toEqual([expect.objectContaining({ payment_count: '4', succeeded_count: '2', failed_count: '2', success_rate: '0.5000' })]);
    const declines = parse((await c.get(`/dashboard/reports/download?table=declines&currency=eur&from=${today()}&to=${today()}`)).html, { columns: true }) as Array<Record<string, string>>;
    expect(declines.map((d) => [d.code, d.count])).toEqual([
      ["'=HYPERLINK(\"x\")", '1'],
      ['card_declined', '1'],
    ]);
  });

  it('when support opens Reports, then the figures show without download links, and a download is refused with a 403', async () => {
    const c = await as('support');
    const page = await c.get('/dashboard/reports');
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-chart="gross-eur"');
    expect(page.html).not.toContain('/dashboard/reports/download');
    expect((await c.get('/dashboard/reports/download?table=volume&currency=eur')).status).toBe(403);
  });

  it.each([
    ['interval=hour', 'interval'],
    ['from=2026-02-30', 'from'],
    ['from=2026-05-02&to=2026-05-01', 'from'],
    ['currency=EURO', 'currency'],
  ])('when the form says %s, then the page shows the error beside %s with a 400', async (query, field) => {
    const c = await as('owner');
    const page = await c.get(`/dashboard/reports?${query}`);
    expect(page.status).toBe(400);
    expect(page.html).toContain(`id="report-${field}-error"`);
    expect(page.html).toContain(`aria-describedby="report-${field}-error"`);
  });

  it('when a download link is edited by hand, then it answers 400 and no file', async () => {
    const c = await as('owner');
    expect((await c.get('/dashboard/reports/download?table=secrets&currency=eur')).status).toBe(400);
    expect((await c.get('/dashboard/reports/download?table=volume')).status).toBe(400);
    expect((await c.get('/dashboard/reports/download?table=volume&currency=eur&from=yesterday')).status).toBe(400);
  });

  it('when any field of the page or of a download holds an edge value, then no answer is a 5xx', async () => {
    const c = await as('owner');
    const values = ['%00', '%ED%A0%80', '%zz', '9'.repeat(300), '-1', '0000-00-00', '2026-01-01T00:00:00Z', '%E2%80%AE', 'week&interval=month'];
    const statuses = new Set<number>();
    for (const path of ['/dashboard/reports', '/dashboard/reports/download']) {
      for (const field of ['interval', 'from', 'to', 'currency', 'table']) {
        for (const v of values) {
          const res = await c.get(`${path}?table=volume&currency=eur&${field}=${v}`);
          statuses.add(res.status);
          expect(res.status, `${path} ${field}=${v}`).toBeLessThan(500);
        }
        const arrays = await c.get(`${path}?${field}[]=a&${field}[x]=b`);
        expect(arrays.status, `${path} ${field}[]`).toBeLessThan(500);
      }
    }
    expect(statuses.has(400)).toBe(true);
  });
});
