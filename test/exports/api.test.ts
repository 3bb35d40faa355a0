import { parse } from 'csv-parse/sync';
import { parse as parseStream } from 'csv-parse';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { header } from '../../src/exports/columns.ts';
import { useTestServer } from '../helpers/server.ts';

// The 100,000-row stream below is above the default bound of a GET export (EXPORT_STREAM_MAX_ROWS).
const t = useTestServer({ env: { EXPORT_STREAM_MAX_ROWS: '200000' } });

const rowsOf = (text: string): Record<string, string>[] => parse(text, { columns: true, bom: false });

describe('GET /v1/exports', () => {
  let key = '';
  let otherKey = '';
  let accountId = '';
  const paid: Record<string, string> = {};

  const pay = async (k: string, name: string, amount: number, currency = 'eur', card = '4242424242424242') => {
    const cs = await t.request('POST', '/v1/checkout/sessions', { key: k, body: { amount, currency, success_url: 'https://example.com/ok' } });
    expect(cs.status).toBe(200);
    expect((await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key: k, body: { card, email: 'payer@example.com', name } })).status).toBe(200);
    const [row] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.body.id}`;
    return row!.id;
  };

  beforeAll(async () => {
    const a = await t.account();
    key = a.test;
    accountId = a.accountId;
    otherKey = (await t.account()).test;
    paid.formula = await pay(key, '=HYPERLINK("http://evil.example","x")', 4000);
    paid.plus = await pay(key, '+1 555 0100', 1999, 'usd');
    paid.yen = await pay(key, '@Yen Payer', 1999, 'jpy', '4000000000000002');
    paid.other = await pay(otherKey, 'Other Account', 500);
    const refund = await t.request('POST', '/v1/refunds', { key, body: { payment_id: paid.formula, amount: 1000 } });
    expect(refund.status).toBe(200);
    await t.request('POST', '/v1/customers', { key, body: { email: 'ada@example.com', first_name: '-Ada', last_name: 'Lovelace' } });
  });

  it('when payments are exported, then a real CSV parser reads the documented columns, both amounts, UTC times and neutralised formulas', async () => {
    const res = await fetch(`${t.url}/v1/exports/payments`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="payments-test-all-to-all.csv"');
    const text = await res.text();
    const [cols] = parse(text, { to_line: 1 }) as string[][];
    expect(cols).toEqual(header('payments'));
    const rows = rowsOf(text);
    expect(rows.map((r) => r.id)).toEqual([paid.formula, paid.plus, paid.yen]);
    const byId: Record<string, Record<string, string>> = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId[paid.formula!]).toMatchObject({ billing_name: `'=HYPERLINK("http://evil.example","x")`, amount_cents: '4000', amount: '40.00', currency: 'eur', status: 'SUCCEEDED', disputed: 'false' });
    expect(byId[paid.plus!]).toMatchObject({ billing_name: "'+1 555 0100", amount_cents: '1999', amount: '19.99', currency: 'usd' });
    expect(byId[paid.yen!]).toMatchObject({ billing_name: "'@Yen Payer", amount_cents: '1999', amount: '1999', status: 'FAILED', failure_code: 'card_declined' });
    const [db] = await t.sql<{ created_at: Date }[]>`select created_at from payments where id = ${paid.formula!}`;
    expect(byId[paid.formula!]!.created).toBe(`${db!.created_at.toISOString().slice(0, 19)}Z`);
    expect(byId[paid.formula!]!.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('when each dataset is exported, then its header comes first and only the rows of this account and mode follow', async () => {
    for (const d of ['refunds', 'disputes', 'customers', 'invoices', 'installment-parts'] as const) {
      const res = await t.request('GET', `/v1/exports/${d}`, { key });
      expect(res.status, d).toBe(200);
      const [cols] = parse(res.body as string, { to_line: 1 }) as string[][];
      expect(cols, d).toEqual(header(d));
    }
    const refunds = rowsOf((await t.request('GET', '/v1/exports/refunds', { key })).body);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ payment_id: paid.formula, amount_cents: '1000', amount: '10.00' });
    const customers = rowsOf((await t.request('GET', '/v1/exports/customers', { key })).body);
    expect(customers.map((c) => c.first_name)).toEqual(["'-Ada"]);
    const other = rowsOf((await t.request('GET', '/v1/exports/payments', { key: otherKey })).body);
    expect(other.map((p) => p.id)).toEqual([paid.other]);
    const live = rowsOf((await t.request('GET', '/v1/exports/payments', { key: await t.key(accountId, 'live') })).body);
    expect(live).toEqual([]);
  });

  it('when a range and filters are given, then only the rows inside them are exported', async () => {
    const [first] = await t.sql<{ created_at: Date }[]>`select created_at from payments where id = ${paid.plus!}`;
    const at = Math.floor(first!.created_at.getTime() / 1000);
    const ids = async (q: string) => rowsOf((await t.request('GET', `/v1/exports/payments?${q}`, { key })).body).map((r) => r.id);
    expect(await ids(`created_gte=${at + 3600}`)).toEqual([]);
    expect(await ids(`created_lt=${at - 3600}`)).toEqual([]);
    expect(await ids(`created_gte=${at - 3600}&created_lt=${at + 3600}&status=succeeded`)).toEqual([paid.formula, paid.plus]);
    expect(await ids('status=FAILED')).toEqual([paid.yen]);
  });

  it.each([
    ['payments?created_gte=yesterday', 'created_gte'],
    ['payments?created_gte=20&created_lt=10', 'created_lt'],
    ['payments?status=LOST', 'status'],
    ['customers?status=OPEN', 'status'],
    ['refunds?customer=cus_abc', 'customer'],
    ['payments?format=xlsx', 'format'],
  ])('when the export %s is asked, then a 400 names %s', async (path, param) => {
    const res = await t.request('GET', `/v1/exports/${path}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it('when an unknown dataset or no key is used, then 404 and 401', async () => {
    expect((await t.request('GET', '/v1/exports/api-keys', { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/exports/payments', { key: null })).status).toBe(401);
  });

  it('when 100,000 payments are exported, then the file streams with the service heap flat, every row read by the parser', async () => {
    const [cs] = await t.sql<{ id: string }[]>`select checkout_session_id as id from payments where id = ${paid.plus!}`;
    // Seeded in one transaction without the service's statement bound (a 100,000-row insert is not a request).
    await t.sql.begin(async (tx) => {
      await tx`set local statement_timeout = 0`;
      await tx`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, checkout_session_id, email, billing_name, card_last4, created_at)
      select 'pay_zz' || lpad(i::text, 9, '0'), ${accountId}, false, 'SUCCEEDED', 1 + i % 9999, 'eur', ${cs!.id},
        'bulk' || i || '@example.com', case when i % 1000 = 0 then '=cmd|' || i else 'Bulk Payer ' || i end, '4242', now()
      from generate_series(1, 100000) i`;
    });
    const res = await fetch(`${t.url}/v1/exports/payments`, { headers: { authorization: `Bearer ${key}` } });
    // Live memory, not garbage: a full collection before each reading (--expose-gc turned on here).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let nextReading = 0;
    let rows = 0;
    let formulas = 0;
    let bytes = 0;
    const body = Readable.fromWeb(res.body as never).on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes < nextReading) return;
      nextReading = bytes + 2_000_000;
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    });
    const parser = body.pipe(parseStream({ columns: true }));
    body.on('error', (err) => parser.destroy(err)); // a cut connection fails the test instead of hanging it
    for await (const record of parser) {
      rows++;
      if ((record as { billing_name: string }).billing_name.startsWith("'=cmd|")) formulas++;
    }
    expect(rows).toBe(100_003);
    expect(formulas).toBe(100);
    // The file is over 15 MB; the service and this reader share the heap, which grows by a few batches at most.
    expect(bytes).toBeGreaterThan(15_000_000);
    expect(peak - before, `heap grew ${Math.round((peak - before) / 1e6)} MB for ${Math.round(bytes / 1e6)} MB of CSV`).toBeLessThan(bytes / 2);
  }, 180_000);
});
