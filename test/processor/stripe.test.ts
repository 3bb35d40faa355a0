import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLogCapture } from '../helpers/logs.ts';
import { useTestServer } from '../helpers/server.ts';
import { LIVE_KEYS, StripeStandIn, stripeEnv } from '../helpers/stripe/api.ts';
import { eventually } from '../helpers/wait.ts';
import { syncProcessorCustomers } from '../../src/processor/customers.ts';
import { settleStuckPayments } from '../../src/checkout/settle.ts';
import { reconcileExpiredIntents } from '../../src/checkout/intents.ts';
import { settleRefundJob } from '../../src/refunds/settle.ts';
import { STRIPE_WEBHOOK_PATH } from '../../src/processor-events/routes.ts';
import { delivered, ElementPayer, eventTypes, paymentsOf, preparedLiveSession, sessionRow } from './helpers.ts';
import { createSession } from '../helpers/factories.ts';
import { DIGITS } from '../helpers/cards.ts';

// The service with live Stripe keys, its stripe-node pointed at a local stand-in of Stripe's API
// (STRIPE_API_URL), which sends its signed events to the service's webhook. No network.
const api = new StripeStandIn();
const capture = useLogCapture('debug');
beforeAll(async () => {
  await api.start();
});
afterAll(async () => {
  await api.close();
});

const t = useTestServer(() => ({ env: stripeEnv(api), log: capture.log }));
let live: string;
let test: string;
beforeAll(async () => {
  api.webhookUrl = `${t.url}${STRIPE_WEBHOOK_PATH}`;
  ({ live, test } = await t.account());
});

/** What Stripe.js does with the card: straight to Stripe (the stand-in), with the publishable key. */
async function confirmInBrowser(payer: ElementPayer, card: string) {
  const res = await fetch(`${api.url}/v1/payment_intents/${payer.intentId}/confirm`, {
    method: 'POST',
    headers: { authorization: `Bearer ${LIVE_KEYS.publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_secret: payer.clientSecret, 'payment_method_data[card][number]': card }).toString(),
  });
  return (await res.json()) as { status: string };
}

const completions = async (sessionId: string, paymentId: string) => ({
  session: await eventTypes(t, sessionId),
  payment: await eventTypes(t, paymentId),
});

describe('the Stripe processor in live mode', () => {
  it('when GET /v1/account is asked with a live key and live keys are configured, then charges_enabled is true in both modes', async () => {
    expect((await t.request('GET', '/v1/account', { key: live })).body).toMatchObject({ livemode: true, charges_enabled: true });
    expect((await t.request('GET', '/v1/account', { key: test })).body).toMatchObject({ livemode: false, charges_enabled: true });
  });

  it('when a live customer is created, then the sweep gives it the stand-in\'s cus_ with an idempotency key from our id; a test one stays on the simulator', async () => {
    const c = (await t.request('POST', '/v1/customers', { key: live, body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' } })).body;
    const tc = (await t.request('POST', '/v1/customers', { key: test, body: { email: 'ada@example.com' } })).body;
    await syncProcessorCustomers(t.s);
    const [row] = await t.sql`select processor_customer_id from customers where id = ${c.id}`;
    expect(row!.processor_customer_id).toMatch(/^cus_/);
    const atStripe = api.customers.get(row!.processor_customer_id)!;
    expect(atStripe).toMatchObject({ email: 'ada@example.com', name: 'Ada Lovelace', livemode: true, metadata: { customer_id: c.id } });
    const sent = api.requests.find((r) => r.path === '/v1/customers' && r.body.includes(encodeURIComponent(c.id)))!;
    expect(sent.headers['idempotency-key']).toBe(`customer-${c.id}`);
    const [trow] = await t.sql`select processor_customer_id from customers where id = ${tc.id}`;
    expect(trow!.processor_customer_id).toMatch(/^pcus_sim_/);
  });

  it('when a live session\'s page is opened twice, then one PaymentIntent exists at Stripe with our ids, amount and currency, stored on the session', async () => {
    const cs = await createSession(t, live, { amount: 2500, currency: 'eur' });
    const payer = new ElementPayer(t, cs.id);
    const page = await payer.open();
    expect(page.status).toBe(200);
    expect(payer.intentId).toMatch(/^pi_/);
    await payer.open();
    const intents = [...api.intents.values()].filter((pi) => pi.metadata.checkout_session_id === cs.id);
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({ id: payer.intentId, amount: 2500, currency: 'eur', livemode: true, automatic_payment_methods: { enabled: true } });
    expect((await sessionRow(t, cs.id)).payment_intent_id).toBe(payer.intentId);
    const create = api.requests.find((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.body.includes(cs.id))!;
    expect(create.headers['idempotency-key']).toBe(`intent-${cs.id}`);
    // The API never shows the client secret.
    const got = await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key: live });
    expect(JSON.stringify(got.body)).not.toContain(payer.clientSecret);
  });

  it('when the card succeeds and the webhook comes first, then the return redirects to success_url and the session completes once, with the card from Stripe', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    expect((await confirmInBrowser(payer, DIGITS.visa)).status).toBe('succeeded');
    await delivered(api, 'payment_intent.succeeded');
    const [p] = await paymentsOf(t, cs.id);
    expect(p).toMatchObject({ status: 'SUCCEEDED', card_brand: 'visa', card_last4: '4242', payment_intent_id: payer.intentId, processing_since: null });
    expect((await sessionRow(t, cs.id)).status).toBe('COMPLETE');
    const back = await payer.back();
    expect(back.status).toBe(303);
    expect(back.location).toContain('merchant.example/thanks');
    expect(await completions(cs.id, p!.id)).toEqual({ session: ['checkout.session.completed'], payment: ['payment.succeeded'] });
  });

  it('when the return comes before the webhook, then the return settles it and the late webhook changes nothing', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    api.holdEvents = true;
    await confirmInBrowser(payer, DIGITS.visa);
    const back = await payer.back();
    expect(back.status).toBe(303);
    const [p] = await paymentsOf(t, cs.id);
    expect(p!.status).toBe('SUCCEEDED');
    await api.release();
    const ev = api.events.at(-1)!;
    expect(ev.event.type).toBe('payment_intent.succeeded');
    expect(ev.status).toBe(200);
    expect(await paymentsOf(t, cs.id)).toHaveLength(1);
    expect(await completions(cs.id, p!.id)).toEqual({ session: ['checkout.session.completed'], payment: ['payment.succeeded'] });
  });

  it('when the same webhook is delivered three more times, then one completion, one checkout.session.completed, one payment.succeeded', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    await confirmInBrowser(payer, DIGITS.visa);
    await delivered(api, 'payment_intent.succeeded', 1);
    const ev = api.eventsOf('payment_intent.succeeded').find((e) => e.event.data.object.id === payer.intentId)!;
    const again = await Promise.all([api.deliver(ev.event), api.deliver(ev.event), api.deliver(ev.event)]);
    expect(again).toEqual([200, 200, 200]);
    const ps = await paymentsOf(t, cs.id);
    expect(ps.map((p) => p.status)).toEqual(['SUCCEEDED']);
    expect(await completions(cs.id, ps[0]!.id)).toEqual({ session: ['checkout.session.completed'], payment: ['payment.succeeded'] });
    expect((await t.sql`select count(*)::int as n from processor_events where id = ${ev.event.id}`)[0]!.n).toBe(1);
  });

  it('when a webhook has a bad signature, then it answers 400 and nothing changes', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    api.holdEvents = true;
    await confirmInBrowser(payer, DIGITS.visa);
    const [event] = api.held;
    api.held = [];
    api.holdEvents = false;
    expect(await api.deliver(event!, 'whsec_not_the_secret')).toBe(400);
    const tampered = { ...event!, id: 'evt_tampered' };
    const res = await fetch(api.webhookUrl!, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' }, body: JSON.stringify(tampered) });
    expect(res.status).toBe(400);
    const [p] = await paymentsOf(t, cs.id);
    expect(p).toMatchObject({ status: 'PENDING' });
    expect(p!.processing_since).not.toBeNull();
    expect((await sessionRow(t, cs.id)).status).toBe('OPEN');
    expect((await t.sql`select count(*)::int as n from processor_events where id = ${event!.id}`)[0]!.n).toBe(0);
  });

  it('when the card is declined, then the payment fails with our code and message and the session stays OPEN for another try', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    await confirmInBrowser(payer, DIGITS.insufficientFunds);
    await delivered(api, 'payment_intent.payment_failed');
    const [p] = await paymentsOf(t, cs.id);
    expect(p).toMatchObject({ status: 'FAILED', failure_code: 'insufficient_funds', failure_message: 'Your card was declined: insufficient funds.' });
    expect(await eventTypes(t, p!.id)).toEqual(['payment.failed']);
    expect((await sessionRow(t, cs.id)).status).toBe('OPEN');
    // The payer tries again with a good card: a second attempt on the same intent succeeds.
    expect((await payer.prepare()).status).toBe(200);
    await confirmInBrowser(payer, DIGITS.visa);
    await eventually(async () => (await sessionRow(t, cs.id)).status === 'COMPLETE', 5000);
    expect((await paymentsOf(t, cs.id)).map((x) => x.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect([...api.intents.values()].filter((pi) => pi.metadata.checkout_session_id === cs.id)).toHaveLength(1);
  });

  it('when the decline webhook of a first press arrives after the payer pressed Pay again, then it does not fail the new attempt, and the new card completes the session', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    api.holdEvents = true;
    try {
      await confirmInBrowser(payer, DIGITS.insufficientFunds); // declined in the browser; its event is held
      expect((await payer.prepare()).status).toBe(200); // the second press: the first attempt is settled FAILED, a new one starts
      await api.release(); // the first decline's event arrives only now
      await delivered(api, 'payment_intent.payment_failed');
    } finally {
      api.holdEvents = false;
    }
    const [first, second] = await paymentsOf(t, cs.id);
    expect(first).toMatchObject({ status: 'FAILED', failure_code: 'insufficient_funds' });
    expect(second).toMatchObject({ status: 'PENDING' });
    expect(second!.processing_since).not.toBeNull();
    await confirmInBrowser(payer, DIGITS.visa);
    expect((await payer.back()).location).toContain('/thanks');
    expect((await sessionRow(t, cs.id)).status).toBe('COMPLETE');
    expect((await paymentsOf(t, cs.id)).map((x) => x.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(await eventTypes(t, second!.id)).toEqual(['payment.succeeded']);
  });

  it('when the card asks for 3-D Secure, then the payment stays in flight until the payer passes it, then completes', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    expect((await confirmInBrowser(payer, DIGITS.threeDSAlt)).status).toBe('requires_action');
    // A return (or the sweeper) meanwhile leaves it in flight: Stripe says requires_action.
    const early = await payer.back();
    expect(early.status).toBe(200);
    expect(early.html).toContain('Payment in progress');
    const [waiting] = await paymentsOf(t, cs.id);
    expect(waiting!.status).toBe('PENDING');
    expect(waiting!.processing_since).not.toBeNull();
    api.authenticate(payer.intentId, 'complete');
    await eventually(async () => (await sessionRow(t, cs.id)).status === 'COMPLETE', 5000);
    expect((await payer.back()).status).toBe(303);
    expect((await paymentsOf(t, cs.id)).map((x) => x.status)).toEqual(['SUCCEEDED']);
  });

  it('when 3-D Secure fails, then the payment fails with authentication_failed', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    await confirmInBrowser(payer, DIGITS.threeDSAlt);
    api.authenticate(payer.intentId, 'fail');
    await eventually(async () => (await paymentsOf(t, cs.id))[0]!.status === 'FAILED', 5000);
    expect((await paymentsOf(t, cs.id))[0]).toMatchObject({ failure_code: 'authentication_failed' });
    expect((await sessionRow(t, cs.id)).status).toBe('OPEN');
  });

  it('when Stripe is down at the return and the webhook is lost, then the payment stays in flight and the sweep settles it once Stripe is back', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    api.holdEvents = true;
    await confirmInBrowser(payer, DIGITS.visa);
    api.held = []; // the webhook is lost
    api.holdEvents = false;
    api.down = 'error';
    const back = await payer.back();
    api.down = null;
    expect(back.status).toBe(200);
    expect(back.html).toContain('Payment in progress');
    const [p] = await paymentsOf(t, cs.id);
    expect(p!.status).toBe('PENDING');
    expect((await sessionRow(t, cs.id)).status).toBe('OPEN');
    // The sweep asks Stripe about attempts in flight for over a minute.
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${p!.id}`;
    expect(await settleStuckPayments(t.s)).toBeGreaterThanOrEqual(1);
    expect((await sessionRow(t, cs.id)).status).toBe('COMPLETE');
    expect(await completions(cs.id, p!.id)).toEqual({ session: ['checkout.session.completed'], payment: ['payment.succeeded'] });
  });

  it('when the sweep finds an attempt still processing at Stripe, then it leaves it in flight', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    api.setProcessing(payer.intentId);
    const [p] = await paymentsOf(t, cs.id);
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${p!.id}`;
    await settleStuckPayments(t.s);
    const [after] = await paymentsOf(t, cs.id);
    expect(after!.status).toBe('PENDING');
    expect(after!.processing_since).not.toBeNull();
  });

  it('when a session expires, then its PaymentIntent is cancelled at Stripe', async () => {
    const cs = await createSession(t, live);
    const payer = new ElementPayer(t, cs.id);
    await payer.open();
    expect((await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key: live })).status).toBe(200);
    await eventually(async () => api.intents.get(payer.intentId)!.status === 'canceled', 5000);
    await eventually(async () => (await sessionRow(t, cs.id)).intent_closed_at !== null, 5000);
  });

  it('when the payer confirms after the session expired (its cancel failed), then the charge is recorded SUCCEEDED and refunded automatically', async () => {
    const cs = await createSession(t, live);
    const payer = new ElementPayer(t, cs.id);
    await payer.open();
    api.down = 'error';
    expect((await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key: live })).status).toBe(200);
    await eventually(async () => api.requests.some((r) => r.path.startsWith(`/v1/payment_intents/${payer.intentId}`)), 5000);
    api.down = null;
    expect(api.intents.get(payer.intentId)!.status).toBe('requires_payment_method');
    // The payer's page was still open: Stripe.js confirms the intent.
    await confirmInBrowser(payer, DIGITS.visa);
    await delivered(api, 'payment_intent.succeeded', api.eventsOf('payment_intent.succeeded').length);
    const ps = await paymentsOf(t, cs.id);
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ status: 'SUCCEEDED', card_last4: '4242', payment_intent_id: payer.intentId });
    expect((await sessionRow(t, cs.id)).status).toBe('EXPIRED');
    const [refund] = await t.sql`select * from refunds where payment_id = ${ps[0]!.id}`;
    expect(refund).toMatchObject({ status: 'PENDING', amount_cents: ps[0]!.amount_cents, reason: null, metadata: { automatic_refund: 'checkout_session_expired' } });
    // The settle job (run here directly) creates it at Stripe, idempotent by our refund id.
    expect(await settleRefundJob(t.s, refund!.id)).toBe('SUCCEEDED');
    const atStripe = [...api.refunds.values()].filter((r) => r.payment_intent === payer.intentId);
    expect(atStripe).toHaveLength(1);
    expect(atStripe[0]!.metadata.refund_id).toBe(refund!.id);
    expect(await eventTypes(t, ps[0]!.id)).toEqual(['payment.succeeded', 'payment.refunded']);
    expect(await eventTypes(t, cs.id)).toEqual(['checkout.session.expired']);
    // The repair pass then closes the intent without recording the charge twice.
    await reconcileExpiredIntents(t.s);
    expect((await sessionRow(t, cs.id)).intent_closed_at).not.toBeNull();
    expect(await paymentsOf(t, cs.id)).toHaveLength(1);
    expect((await t.sql`select count(*)::int as n from refunds where payment_id = ${ps[0]!.id}`)[0]!.n).toBe(1);
  });

  it('when a live payment is refunded through the API, then Stripe gets one refund keyed by our refund id and it succeeds', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    await confirmInBrowser(payer, DIGITS.visa);
    await eventually(async () => (await sessionRow(t, cs.id)).status === 'COMPLETE', 5000);
    const [p] = await paymentsOf(t, cs.id);
    const res = await t.request('POST', '/v1/refunds', { key: live, body: { payment_id: p!.id, amount: 500 } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('SUCCEEDED');
    const sent = api.requests.find((r) => r.method === 'POST' && r.path === '/v1/refunds' && r.body.includes(res.body.id))!;
    expect(sent.headers['idempotency-key']).toBe(`refund-${res.body.id}`);
    expect([...api.refunds.values()].filter((r) => r.payment_intent === payer.intentId)).toHaveLength(1);
    const [row] = await t.sql`select amount_refunded_cents from payments where id = ${p!.id}`;
    expect(Number(row!.amount_refunded_cents)).toBe(500);
  });

  it('when a dispute is opened at Stripe, then charge.dispute.created records it on the payment', async () => {
    const { cs, payer } = await preparedLiveSession(t, live);
    await confirmInBrowser(payer, DIGITS.visa);
    await eventually(async () => (await sessionRow(t, cs.id)).status === 'COMPLETE', 5000);
    const d = api.openDispute(payer.intentId);
    await delivered(api, 'charge.dispute.created', api.eventsOf('charge.dispute.created').length);
    const [p] = await paymentsOf(t, cs.id);
    expect(p!.disputed).toBe(true);
    const [row] = await t.sql`select * from disputes where processor_dispute_id = ${d.id}`;
    expect(row).toMatchObject({ payment_id: p!.id, status: 'NEEDS_RESPONSE', reason: 'fraudulent' });
  });

  it('when the whole file has run, then no request the service sent carries a card number and no log line a key, webhook secret or client secret', async () => {
    const fromService = api.requests.filter((r) => String(r.headers.authorization ?? '').includes('sk_'));
    expect(fromService.length).toBeGreaterThan(10);
    for (const card of [DIGITS.visa, DIGITS.declined, DIGITS.insufficientFunds, DIGITS.threeDSAlt]) expect(fromService.filter((r) => r.body.includes(card) || r.path.includes(card))).toEqual([]);
    // The card went to Stripe only, from the browser's side (the publishable key).
    expect(api.requests.filter((r) => r.body.includes(DIGITS.visa)).every((r) => String(r.headers.authorization).includes('pk_'))).toBe(true);
    const log = capture.text;
    expect(log.length).toBeGreaterThan(1000);
    for (const secret of [LIVE_KEYS.secretKey, LIVE_KEYS.webhookSecret, ...[...api.intents.values()].map((pi) => pi.client_secret as string)]) {
      expect(log).not.toContain(secret);
    }
    for (const card of [DIGITS.visa, DIGITS.insufficientFunds, DIGITS.threeDSAlt]) expect(log).not.toContain(card);
  });
});
