import { describe, expect, it } from 'vitest';
import { createSession } from '../checkout/helpers.ts';
import { createLink } from '../payment-links/helpers.ts';
import { Payer, pathOf } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { StripeStandIn } from '../helpers/stripe/api.ts';
import { STRIPE_WEBHOOK_PATH } from '../../src/processor-events/routes.ts';
import { syncProcessorCustomers } from '../../src/processor/customers.ts';
import { newId } from '../../src/lib/ids.ts';

// The service with no Stripe keys at all: test mode runs the simulator, live mode takes nothing.
describe('live mode without Stripe keys', () => {
  const t = useTestServer();

  it('when GET /v1/account is asked, then charges_enabled is false for live and true for test', async () => {
    const a = await t.account();
    expect((await t.request('GET', '/v1/account', { key: a.live })).body).toMatchObject({ livemode: true, charges_enabled: false });
    expect((await t.request('GET', '/v1/account', { key: a.test })).body).toMatchObject({ livemode: false, charges_enabled: true });
  });

  it('when a payer opens or posts a card to a live checkout page, then payment is refused and nothing is simulated', async () => {
    const a = await t.account();
    const cs = await createSession(t, a.live);
    const payer = new Payer(t);
    const page = await payer.get(`/checkout/${cs.id}`);
    expect(page.html).toContain('cannot take live payments');
    expect(page.html).not.toContain('name="card_number"');
    const posted = await payer.post(`/checkout/${cs.id}/pay`, { email: 'p@example.com', name: 'P', card_number: '4242424242424242', expiry: '12/34', cvc: '123' });
    expect(posted.status).not.toBe(303);
    expect(await t.sql`select id from payments where checkout_session_id = ${cs.id}`).toEqual([]);
    const [row] = await t.sql`select status, payment_intent_id from checkout_sessions where id = ${cs.id}`;
    expect(row).toEqual({ status: 'OPEN', payment_intent_id: null });
  });

  it('when a payer opens or posts a live payment link, then the page says live payments are off, with no form, and no session starts; a test link still works', async () => {
    const a = await t.account();
    const live = await createLink(t, a.live, { collect_email: true });
    const payer = new Payer(t);
    const page = await payer.get(pathOf(live.url));
    expect(page.status).toBe(503);
    expect(page.html).toContain('cannot take live payments');
    expect(page.html).not.toContain('name="email"');
    const posted = await payer.post(pathOf(live.url), { email: 'p@example.com', src: 'DIRECT' });
    expect(posted.status).toBe(503);
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
