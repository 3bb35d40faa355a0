import { describe, expect, it } from 'vitest';
import { Payer, pathOf } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { StripeStandIn } from '../helpers/stripe/api.ts';
import { STRIPE_WEBHOOK_PATH } from '../../src/processor-events/routes.ts';
import { syncProcessorCustomers } from '../../src/processor/customers.ts';
import { newId } from '../../src/lib/ids.ts';
import { createLink, createSession } from '../helpers/factories.ts';
import { DIGITS } from '../helpers/cards.ts';

// The service with no Stripe keys at all: test mode runs the simulator, live mode takes nothing.
describe('live mode without Stripe keys', () => {
  const t = useTestServer();

  it('when GET /v1/account is asked, then charges_enabled is false for live and true for test', async () => {
    const a = await t.account();
    expect((await t.request('GET', '/v1/account', { key: a.live })).body).toMatchObject({ livemode: true, charges_enabled: false });
    expect((await t.request('GET', '/v1/account', { key: a.test })).body).toMatchObject({ livemode: false, charges_enabled: true });
  });

  // Issue 21, point 6: the merchant's setup, not an outage. A page read answers 200, a post 409,
  // an API call 400 processor_unavailable: never a 5xx that would page whoever watches the service.
  it('when a payer opens or posts a card to a live checkout page, then payment is refused (200, then 409) and nothing is simulated', async () => {
    const a = await t.account();
    const cs = await createSession(t, a.live);
    const payer = new Payer(t);
    const page = await payer.get(`/checkout/${cs.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('cannot take live payments');
    expect(page.html).not.toContain('name="card_number"');
    const posted = await payer.post(`/checkout/${cs.id}/pay`, { email: 'p@example.com', name: 'P', card_number: DIGITS.visa, expiry: '12/34', cvc: '123' });
    expect(posted.status).toBe(409);
    expect(posted.html).toContain('cannot take live payments');
    expect(await t.sql`select id from payments where checkout_session_id = ${cs.id}`).toEqual([]);
    const [row] = await t.sql`select status, payment_intent_id from checkout_sessions where id = ${cs.id}`;
    expect(row).toEqual({ status: 'OPEN', payment_intent_id: null });
  });

  it('when a payer opens or posts a live payment link, then the page says live payments are off (200, then 409), with no form, and no session starts; a test link still works', async () => {
    const a = await t.account();
    const live = await createLink(t, a.live, { collect_email: true });
    const payer = new Payer(t);
    const page = await payer.get(pathOf(live.url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('cannot take live payments');
    expect(page.html).not.toContain('name="email"');
    const posted = await payer.post(pathOf(live.url), { email: 'p@example.com', src: 'DIRECT' });
    expect(posted.status).toBe(409);
    expect(posted.html).toContain('cannot take live payments');
    expect(await t.sql`select id from checkout_sessions where payment_link_id = ${live.id}`).toEqual([]);

    const test = await createLink(t, a.test);
    const testPayer = new Payer(t);
    expect((await testPayer.get(pathOf(test.url))).status).toBe(200);
    expect((await testPayer.post(pathOf(test.url), { src: 'DIRECT' })).status).toBe(303);
  });

  it('when a live payment is refunded, then 400 processor_unavailable and no refund is recorded', async () => {
    const a = await t.account();
    // A live payment recorded while live keys were set (a deployment that has since removed them).
    const [p] = await t.sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, payment_intent_id, succeeded_at)
      values (${newId('pay')}, ${a.accountId}, true, 'SUCCEEDED', 1000, 'usd', 'pi_live', now()) returning id`;
    const res = await t.request('POST', '/v1/refunds', { key: a.live, body: { payment_id: p!.id } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'processor_unavailable' });
    expect(await t.sql`select id from refunds where payment_id = ${p!.id}`).toEqual([]);
  });

  it('when a live dispute is submitted or closed, or a live refund cancelled, then 400 processor_unavailable and nothing is marked pending', async () => {
    const a = await t.account();
    const [p] = await t.sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, payment_intent_id, succeeded_at)
      values (${newId('pay')}, ${a.accountId}, true, 'SUCCEEDED', 1000, 'usd', 'pi_live_dispute', now()) returning id`;
    const [dp] = await t.sql`
      insert into disputes (id, account_id, livemode, payment_id, processor_dispute_id, processor_created_at, amount_cents, currency, reason, status, evidence_due_by)
      values (${newId('dp')}, ${a.accountId}, true, ${p!.id}, 'du_live_off', now(), 1000, 'usd', 'fraudulent', 'NEEDS_RESPONSE', now() + interval '7 days') returning id`;
    const [re] = await t.sql`
      insert into refunds (id, account_id, livemode, payment_id, amount_cents, currency) values (${newId('re')}, ${a.accountId}, true, ${p!.id}, 500, 'usd') returning id`;
    const calls = [
      t.request('PATCH', `/v1/disputes/${dp!.id}`, { key: a.live, body: { evidence: { product_description: 'Tea' }, submit: true } }),
      t.request('POST', `/v1/disputes/${dp!.id}/close`, { key: a.live }),
      t.request('POST', `/v1/refunds/${re!.id}/cancel`, { key: a.live }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'processor_unavailable' });
      expect(res.body.error.message).toContain('GET /v1/account shows charges_enabled');
    }
    expect((await t.sql`select status, pending_action, evidence from disputes where id = ${dp!.id}`)[0]).toEqual({ status: 'NEEDS_RESPONSE', pending_action: null, evidence: {} });
    expect((await t.sql`select status from refunds where id = ${re!.id}`)[0]!.status).toBe('PENDING');
  });

  it('when the live API is used without keys, then no call answers a 5xx', async () => {
    const a = await t.account();
    const key = a.live;
    const call = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const cus = (await call('POST', '/v1/customers', { email: 'live@example.com' })).body;
    const link = (await call('POST', '/v1/payment-links', { amount: 1500, currency: 'usd', name: 'Tea', installment_enabled: true })).body;
    const cs = (await call('POST', '/v1/checkout/sessions', { amount: 1500, currency: 'usd', success_url: 'https://shop.example/ok', customer_id: cus.id })).body;
    const inv = (await call('POST', '/v1/invoices', { customer_id: cus.id, currency: 'usd', line_items: [{ name: 'Tea', quantity: 1, amount: 1500 }] })).body;
    const answers = [
      await call('GET', '/v1/account'),
      await call('GET', `/v1/customers/${cus.id}`),
      await call('POST', `/v1/customers/${cus.id}/portal-sessions`),
      await call('GET', `/v1/payment-links/${link.id}`),
      await call('GET', `/v1/checkout/sessions/${cs.id}`),
      await call('POST', `/v1/checkout/sessions/${cs.id}/expire`),
      await call('POST', `/v1/invoices/${inv.id}/send`),
      await call('GET', '/v1/payments'),
      await call('GET', '/v1/refunds'),
      await call('GET', '/v1/disputes'),
      await call('GET', '/v1/installment-plans'),
      await call('POST', '/v1/refunds', { payment_id: 'pay_00000000000000000000000000' }),
      await call('POST', '/v1/test-helpers/advance-time', { seconds: 60 }),
      await call('POST', '/v1/webhook-endpoints', { url: 'https://hooks.example.com/x', enabled_events: ['*'] }),
    ];
    expect(answers.map((r) => r.status).filter((status) => status >= 500)).toEqual([]);
    expect(answers.slice(0, 10).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200]);
    // The pages they lead to: the link, the checkout (expired now), the invoice, a new checkout.
    const payer = new Payer(t);
    const pages = [pathOf(link.url), `/checkout/${cs.id}`, pathOf(answers[6]!.body.hosted_invoice_url)];
    const cs2 = (await call('POST', '/v1/checkout/sessions', { amount: 1500, currency: 'usd', success_url: 'https://shop.example/ok' })).body;
    pages.push(`/checkout/${cs2.id}`);
    for (const path of pages) expect((await payer.get(path)).status, path).toBe(200);
  });

  it('when live customers exist, then the processor-customer sweep leaves them without a twin and still fills test ones', async () => {
    const a = await t.account();
    const l = (await t.request('POST', '/v1/customers', { key: a.live, body: { email: 'l@example.com' } })).body;
    const c = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 't@example.com' } })).body;
    await syncProcessorCustomers(t.s);
    const rows = await t.sql`select id, processor_customer_id from customers where id in (${l.id}, ${c.id}) order by id`;
    expect(rows.find((r) => r.id === l.id)!.processor_customer_id).toBeNull();
    expect(rows.find((r) => r.id === c.id)!.processor_customer_id).toMatch(/^pcus_sim_/);
  });

  it('when a Stripe event arrives for a mode without keys, then 400 and nothing is recorded', async () => {
    const api = await new StripeStandIn().start();
    try {
      api.webhookUrl = `${t.url}${STRIPE_WEBHOOK_PATH}`;
      const status = await api.deliver({ id: 'evt_live_off', object: 'event', type: 'payment_intent.succeeded', livemode: true, data: { object: { id: 'pi_x', livemode: true } } });
      expect(status).toBe(400);
      expect(await t.sql`select id from processor_events`).toEqual([]);
    } finally {
      await api.close();
    }
  });
});
