import { Writable } from 'node:stream';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { insertCustomer } from '../../src/customers/store.ts';
import { syncProcessorCustomers } from '../../src/processor/customers.ts';
import { simulatedCustomerId } from '../../src/processor/simulator.ts';
import { processorWorker } from '../../workers/processor.ts';
import { useTestServer } from '../helpers/server.ts';
import { Payer } from '../helpers/payer.ts';
import { createSession } from '../helpers/factories.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const t = useTestServer({ workers: [processorWorker as never] });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

async function paidSession(k: string, body: Record<string, unknown> = {}, card = DIGITS.visa) {
  const cs = await createSession(t, k, body);
  await new Payer(t).pay(cs.id, { card_number: card });
  return cs;
}

describe('GET /v1/payments', () => {
  it('when listed, then newest first, filtered by customer and status, and the cursor walks the filtered set', async () => {
    const a = await t.account();
    const cus = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'p@example.com' } })).body;
    await paidSession(a.test, { customer_id: cus.id });
    await paidSession(a.test);
    await paidSession(a.test, { customer_id: cus.id }, DIGITS.declined);
    await paidSession(a.test, { customer_id: cus.id });
    const all = (await t.request('GET', '/v1/payments', { key: a.test })).body;
    expect(all).toMatchObject({ object: 'list', url: '/v1/payments', has_more: false });
    expect(all.data.length).toBe(4);
    const ids = all.data.map((p: { id: string }) => p.id);
    expect([...ids].sort().reverse()).toEqual(ids);

    const mine = (await t.request('GET', `/v1/payments?customer=${cus.id}`, { key: a.test })).body.data;
    expect(mine.map((p: { customer_id: string }) => p.customer_id)).toEqual([cus.id, cus.id, cus.id]);
    const mineOk = (await t.request('GET', `/v1/payments?customer=${cus.id}&status=SUCCEEDED&limit=1`, { key: a.test })).body;
    expect(mineOk.data.length).toBe(1);
    expect(mineOk.has_more).toBe(true);
    const next = (await t.request('GET', `/v1/payments?customer=${cus.id}&status=SUCCEEDED&starting_after=${mineOk.data[0].id}`, { key: a.test })).body;
    expect(next.data.length).toBe(1);
    expect(next.has_more).toBe(false);
    expect(next.data[0].status).toBe('SUCCEEDED');
    const failed = (await t.request('GET', '/v1/payments?status=FAILED', { key: a.test })).body.data;
    expect(failed).toMatchObject([{ status: 'FAILED', failure_code: 'card_declined', failure_message: 'Your card was declined.', receipt_url: null }]);
  });

  it('when a filter value is not a payment status, or both cursors are sent, then it answers 400', async () => {
    expect((await t.request('GET', '/v1/payments?status=PAID', { key })).body.error.param).toBe('status');
    const both = await t.request('GET', '/v1/payments?starting_after=pay_00000000000000000000000000&ending_before=pay_00000000000000000000000000', { key });
    expect(both.status).toBe(400);
    expect(both.body.error.type).toBe('invalid_request_error');
  });
});

describe('GET /v1/payments/:id', () => {
  it('when the payment is of another account, of the other mode or unknown, then it answers 404', async () => {
    const cs = await paidSession(key);
    const id = (await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body.payment_id;
    const a = await t.account();
    expect((await t.request('GET', `/v1/payments/${id}`, { key })).status).toBe(200);
    for (const [k, pid] of [[a.test, id], [(await t.account()).live, id], [key, 'pay_00000000000000000000000000'], [key, 'x']] as const) {
      const res = await t.request('GET', `/v1/payments/${pid}`, { key: k });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    }
  });
});

describe('processor customers', () => {
  it('when a customer is created in test mode (the simulator), then its processor customer comes with it, and nothing is left for the sweep', async () => {
    const cus = (await t.request('POST', '/v1/customers', { key, body: { email: 'proc@example.com', first_name: 'Pro' } })).body;
    expect(cus.processor_customer_id).toMatch(/^pcus_sim_[0-9a-f]{24}$/); // docs/payments.md: `pcus_sim_…`
    expect(cus.processor_customer_id).toBe(simulatedCustomerId(cus.id, false));
    const row = (await t.sql`select processor_customer_id from customers where id = ${cus.id}`)[0]!;
    expect(row.processor_customer_id).toBe(cus.processor_customer_id);
    expect(await t.sql`select id from processor_customers_due where id = ${cus.id}`).toHaveLength(0);
    expect((await t.request('GET', `/v1/customers/${cus.id}`, { key })).body.processor_customer_id).toBe(cus.processor_customer_id);
  });

  it('when customers wait on the work list and Redis lost every job, then the next sweep fills each once, and a second sweep changes nothing', async () => {
    await t.workers!.close();
    const a = await t.account();
    const ids: string[] = [];
    // Inserted without their twin, as a processor that needs a call (Stripe) or a plan's customer leaves them.
    for (let i = 0; i < 3; i++) ids.push((await insertCustomer(t.sql, { accountId: a.accountId, livemode: false }, { email: `lost${i}@example.com` })).id);
    expect(await t.sql`select id from processor_customers_due where id in ${t.sql(ids)}`).toHaveLength(3);
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
    if (keys.length) await t.s.redis.del(...keys);
    expect(await syncProcessorCustomers(t.s)).toBeGreaterThanOrEqual(3);
    expect(await syncProcessorCustomers(t.s)).toBe(0);
    const rows = await t.sql`select id, processor_customer_id from customers where id in ${t.sql(ids)}`;
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.processor_customer_id).toMatch(/^pcus_sim_[0-9a-f]{24}$/);
    expect(new Set(rows.map((r) => r.processor_customer_id)).size).toBe(3); // one processor customer each
  });
});

describe('logs', () => {
  it('when a payer posts card details, then no log line holds the card number or the CVC', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
    const app = createApp({ ...t.s, log: pino({ level: 'trace' }, sink) });
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const cs = await createSession(t, key);
      const payer = new Payer({ ...t, url });
      await payer.pay(cs.id, { card_number: CARDS.declined, cvc: '731' });
      await payer.pay(cs.id, { card_number: CARDS.invalidNumber, cvc: '731' });
      await payer.pay(cs.id, { card_number: CARDS.threeDS, cvc: '731' });
      await payer.post(`/checkout/${cs.id}/pay`, { card_number: DIGITS.visa.repeat(600), cvc: '731' });
    } finally {
      server.close();
    }
    const all = lines.join('');
    expect(all).toContain('request'); // the access log did run
    expect(all).not.toMatch(/4000\s?0000\s?0000\s?0002|4242\s?4242\s?4242\s?424|4000000000003220/);
    // A three-digit CVC can turn up inside timestamps and durations: look for it as a value.
    expect(all).not.toMatch(/cvc\W{0,3}731|"731"|=731\b/);
    expect(all).not.toMatch(/12\/34|12%2F34/); // nor the expiry
  });
});
