import { beforeAll, describe, expect, it } from 'vitest';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { refundsWorker } from '../../workers/refunds.ts';
import { eventually } from '../helpers/wait.ts';
import type { DashClient } from './client.ts';
import { signedIn } from './client.ts';
import { createSession } from '../helpers/factories.ts';

// Issue 22, point 8: what a merchant noticed on the dashboard. Home's volumes say they are gross;
// a payment's page shows its session's line items and metadata; the payments filter takes an
// email; a deleted customer is never a link to a 404; the refund field and its hint agree.

const t = useTestServer({ workers: [refundsWorker as never] });
let a: { accountId: string; test: string };
let c: DashClient;
let teapot: string; // 2 × 8.50 + 32.00 = 49.00 usd, with line items and metadata, of Ada (customer)
let gift: string; // 12.00 usd, paid by grace@example.com, no customer
let orphan: string; // 5.00 usd, of a customer deleted since
let orphanCustomer: string;
let orphanSession: string;

async function paid(body: Record<string, unknown>, email?: string): Promise<{ payment: string; session: string }> {
  const cs = await createSession(t, a.test, body);
  expect((await new Payer(t).pay(cs.id, email ? { email } : {})).status).toBe(303);
  const [row] = await t.sql`select id from payments where checkout_session_id = ${cs.id}`;
  return { payment: row!.id as string, session: cs.id };
}

beforeAll(async () => {
  a = await t.account();
  const ada = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'Ada@Example.com', first_name: 'Ada' } })).body.id as string;
  teapot = (
    await paid({
      amount: 4900,
      currency: 'usd',
      customer_id: ada,
      line_items: [
        { name: 'Green tea, 100 g', quantity: 2, amount: 850 },
        { name: 'Teapot', quantity: 1, amount: 3200 },
      ],
      metadata: { order_id: '1042', channel: 'web' },
    })
  ).payment;
  gift = (await paid({ amount: 1200, currency: 'usd', description: 'Gift card' }, 'grace@example.com')).payment;
  orphanCustomer = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'gone@example.com' } })).body.id as string;
  const o = await paid({ amount: 500, currency: 'usd', customer_id: orphanCustomer });
  orphan = o.payment;
  orphanSession = o.session;
  expect((await t.request('DELETE', `/v1/customers/${orphanCustomer}`, { key: a.test })).status).toBe(200);
  c = await signedIn(t, a.accountId, 'owner@example.com');
});

describe('the dashboard details', () => {
  it('when Home is opened, then its volumes say they are gross, and a refund leaves them as they were', async () => {
    const before = (await c.get('/dashboard')).html;
    expect(before).toContain('Gross volume today (UTC)</h2>');
    expect(before).toContain('Gross volume, last 30 days</h2>');
    expect(before.match(/<p class="hint">Succeeded payments, before refunds\.<\/p>/g)).toHaveLength(2);
    expect(before).toContain('<h2 id="h-chart">Daily gross volume (USD)</h2>');
    const today = /data-stat="today"[^]*?<\/section>/.exec(before)![0];
    expect(today).toContain('$66.00');

    expect((await t.request('POST', '/v1/refunds', { key: a.test, body: { payment_id: gift, amount: 200 } })).status).toBe(200);
    await eventually(async () => (await t.sql`select status from refunds where payment_id = ${gift}`)[0]?.status === 'SUCCEEDED');
    const after = /data-stat="today"[^]*?<\/section>/.exec((await c.get('/dashboard')).html)![0];
    expect(after).toContain('$66.00');
  });

  it("when a payment's page is opened, then it shows its session's line items, their totals and the session's metadata", async () => {
    const h = (await c.get(`/dashboard/payments/${teapot}`)).html;
    const session = /<section class="card" id="session"[^]*?<\/section>/.exec(h)![0];
    expect(session).toContain('<h2>Checkout session</h2>');
    expect(session).toMatch(/<td>Green tea, 100 g<\/td><td class="num">2<\/td><td class="num">\$8\.50<\/td><td class="num">\$17\.00<\/td>/);
    expect(session).toMatch(/<td>Teapot<\/td><td class="num">1<\/td><td class="num">\$32\.00<\/td><td class="num">\$32\.00<\/td>/);
    expect(session).toContain('<dt>Metadata</dt><dd><span class="mono pre">channel=web\norder_id=1042</span></dd>');
    // A session without line items says what it charged.
    expect((await c.get(`/dashboard/payments/${gift}`)).html).toContain('No line items: the session charges its amount, $12.00.');
  });

  it('when the payments list is filtered by an email, then it keeps the payments of that payer email or of the customer with that email, whatever the case', async () => {
    const ids = (html: string) => [...html.matchAll(/<a href="\/dashboard\/payments\/(pay_[0-9a-z]+)">/g)].map((m) => m[1]);
    expect(ids((await c.get('/dashboard/payments?customer=GRACE%40example.com')).html)).toEqual([gift]);
    // Ada's payment carries the email she typed (the simulator page's default) and her customer's email on file.
    const byCustomerEmail = await c.get('/dashboard/payments?customer=ada%40example.com');
    expect(ids(byCustomerEmail.html)).toEqual([teapot]);
    expect(byCustomerEmail.html).toContain('value="ada@example.com"');
    expect(byCustomerEmail.html).toContain('<label for="f-customer">Customer ID or email</label>');
    expect(ids((await c.get('/dashboard/payments?customer=nobody%40example.com')).html)).toEqual([]);
    // A customer id still filters as before.
    const [row] = await t.sql`select customer_id from payments where id = ${teapot}`;
    expect(ids((await c.get(`/dashboard/payments?customer=${row!.customer_id}`)).html)).toEqual([teapot]);
    // Checked as the API checks a query's text: too long, or a NUL, is a 400, never a 5xx.
    for (const bad of [`${'a'.repeat(250)}%40example.com`, 'a%00%40example.com']) expect((await c.get(`/dashboard/payments?customer=${bad}`)).status, bad).toBe(400);
  });

  it('when a payment\'s customer was deleted, then the list, the payment and its session name the customer as deleted, with no link to it', async () => {
    const list = (await c.get('/dashboard/payments')).html;
    expect(list).not.toContain(`href="/dashboard/customers/${orphanCustomer}"`);
    expect(list).toContain('payer@example.com <span class="muted">(customer deleted)</span>');
    for (const path of [`/dashboard/payments/${orphan}`, `/dashboard/checkout-sessions/${orphanSession}`]) {
      const h = (await c.get(path)).html;
      expect(h, path).not.toContain(`href="/dashboard/customers/${orphanCustomer}"`);
      expect(h, path).toContain(`<span class="mono">${orphanCustomer}</span> <span class="muted">(deleted)</span>`);
    }
    // A customer that exists is still a link.
    expect((await c.get(`/dashboard/payments/${teapot}`)).html).toMatch(/<dt>Customer<\/dt><dd><a class="mono" href="\/dashboard\/customers\/cus_/);
  });

  it('when the refund form is opened, then the amount filled in is all that is left and the hint says so; after a refused amount, the hint says what an empty field does', async () => {
    const h = (await c.get(`/dashboard/payments/${teapot}`)).html;
    expect(h).toMatch(/<input type="text" id="amount" name="amount"[^>]*value="49.00">/);
    expect(h).toContain('All that is left, $49.00, is filled in: type less to refund part of it.');
    expect(h).not.toContain('Leave it empty');
    const refused = await c.post(`/dashboard/payments/${teapot}/refunds`, { amount: '60.00', reason: '' });
    expect(refused.status).toBe(400);
    expect(refused.html).toMatch(/id="amount" name="amount"[^>]*value="60.00"/);
    expect(refused.html).toContain('Up to $49.00. Left empty, it refunds all that is left.');
  });
});
