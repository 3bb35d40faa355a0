import { beforeAll, describe, expect, it } from 'vitest';
import { refundsWorker } from '../../workers/refunds.ts';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { Payer, payThroughLink } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { paidPayment, paymentRow, refund, refundRow } from './helpers.ts';
import { createLink, createSession } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer({ workers: [refundsWorker] });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const getRefund = async (id: string) => (await t.request('GET', `/v1/refunds/${id}`, { key })).body;
const getPayment = async (id: string) => (await t.request('GET', `/v1/payments/${id}`, { key })).body;
const settled = (id: string) => eventually(async () => {
  const r = await getRefund(id);
  return r.status !== 'PENDING' ? r : null;
}, 10_000);

describe('refunding a payment in full', () => {
  it('when a refund names no amount, then it takes what remains, answers PENDING, then SUCCEEDED through the job, and the payment shows it refunded', async () => {
    const { paymentId } = await paidPayment(t, key);
    const res = await refund(t, key, { payment_id: paymentId, reason: 'requested_by_customer', metadata: { order: '1042' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^re_/),
      object: 'refund',
      livemode: false,
      payment_id: paymentId,
      amount_cents: 1999,
      currency: 'usd',
      status: 'PENDING',
      reason: 'requested_by_customer',
      failure_reason: null,
      metadata: { order: '1042' },
      created: expect.any(Number),
      updated: expect.any(Number),
    });
    const done = await settled(res.body.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', amount_cents: 1999, failure_reason: null });

    const payment = await getPayment(paymentId);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', amount_cents: 1999, amount_refunded_cents: 1999, refunded: true });
    expect(await refundRow(t, res.body.id)).toMatchObject({ status: 'SUCCEEDED', amount_cents: 1999 });
    expect(await paymentRow(t, paymentId)).toMatchObject({ amount_refunded_cents: 1999 });

    // Events: refund.created (PENDING), refund.updated (SUCCEEDED); payment.refunded with the payment as the API shows it.
    const refundEvents = await eventObjects(t, res.body.id);
    expect(refundEvents.map((e) => e.type)).toEqual(['refund.created', 'refund.updated']);
    expect(refundEvents[0]!.object).toMatchObject({ object: 'refund', status: 'PENDING', amount_cents: 1999 });
    expect(refundEvents[1]!.object).toEqual(done);
    expect(await eventsFor(t, paymentId)).toEqual(['payment.succeeded', 'payment.refunded']);
    const refunded = (await eventObjects(t, paymentId)).find((e) => e.type === 'payment.refunded')!;
    expect(refunded.object).toEqual(payment);
  });

  it('when a payment is already refunded in full, then another refund is refused naming payment_id (no amount) or amount (with one)', async () => {
    const { paymentId } = await paidPayment(t, key);
    expect((await refund(t, key, { payment_id: paymentId })).status).toBe(200);
    const again = await refund(t, key, { payment_id: paymentId });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'parameter_invalid', param: 'payment_id' });
    const one = await refund(t, key, { payment_id: paymentId, amount: 1 });
    expect(one.status).toBe(400);
    expect(one.body.error).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    expect(await t.sql`select amount_cents from refunds where payment_id = ${paymentId}`).toEqual([{ amount_cents: 1999 }]);
  });
});

describe('partial refunds', () => {
  it('when a payment is refunded in two parts, then it is refunded only after the second, with payment.refunded after each', async () => {
    const { paymentId } = await paidPayment(t, key, { amount: 5000 });
    const first = await refund(t, key, { payment_id: paymentId, amount: 1200 });
    expect(first.body).toMatchObject({ status: 'PENDING', amount_cents: 1200 });
    await settled(first.body.id);
    expect(await getPayment(paymentId)).toMatchObject({ amount_refunded_cents: 1200, refunded: false });

    const rest = await refund(t, key, { payment_id: paymentId });
    expect(rest.body).toMatchObject({ status: 'PENDING', amount_cents: 3800 });
    await settled(rest.body.id);
    expect(await getPayment(paymentId)).toMatchObject({ amount_refunded_cents: 5000, refunded: true });
    const paymentEvents = await eventObjects(t, paymentId);
    expect(paymentEvents.map((e) => e.type)).toEqual(['payment.succeeded', 'payment.refunded', 'payment.refunded']);
    expect(paymentEvents[1]!.object).toMatchObject({ amount_refunded_cents: 1200, refunded: false });
    expect(paymentEvents[2]!.object).toMatchObject({ amount_refunded_cents: 5000, refunded: true });
  });

  it('when a refund is PENDING, then its amount is taken: the remainder is what is left after it', async () => {
    const { paymentId } = await paidPayment(t, key, { amount: 1000 });
    expect((await refund(t, key, { payment_id: paymentId, amount: 700 })).status).toBe(200);
    const over = await refund(t, key, { payment_id: paymentId, amount: 301 });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    expect(over.body.error.message).toContain('300');
    expect((await refund(t, key, { payment_id: paymentId })).body).toMatchObject({ amount_cents: 300 });
  });
});

describe('concurrent refunds', () => {
  it('when 20 refunds of a tenth of a payment arrive at once, then exactly 10 are created and 10 refused naming amount, every round', async () => {
    for (let round = 0; round < 4; round++) {
      const { paymentId } = await paidPayment(t, key, { amount: 2000 });
      const answers = await Promise.all(Array.from({ length: 20 }, () => refund(t, key, { payment_id: paymentId, amount: 200 })));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      expect(ok).toHaveLength(10);
      expect(refused).toHaveLength(10);
      for (const r of refused) expect(r).toMatchObject({ status: 400, body: { error: { code: 'parameter_invalid', param: 'amount' } } });
      const [sum] = await t.sql`
        select count(*)::int as n, sum(amount_cents)::int as total from refunds where payment_id = ${paymentId}`;
      expect(sum).toEqual({ n: 10, total: 2000 });
    }
  });
});

describe('refunds that fail', () => {
  it('when the payment was made with 4000 0000 0000 5126, then the refund is PENDING, then FAILED with a failure_reason, and the amount is free again', async () => {
    const { paymentId } = await paidPayment(t, key, { card: CARDS.refundFails });
    const res = await refund(t, key, { payment_id: paymentId, amount: 500 });
    expect(res.body).toMatchObject({ status: 'PENDING' });
    const done = await settled(res.body.id);
    expect(done).toMatchObject({ status: 'FAILED', failure_reason: 'declined' });
    expect(await getPayment(paymentId)).toMatchObject({ amount_refunded_cents: 0, refunded: false });
    expect(await eventsFor(t, res.body.id)).toEqual(['refund.created', 'refund.updated']);
    expect((await eventObjects(t, res.body.id))[1]!.object).toEqual(done);
    expect(await eventsFor(t, paymentId)).toEqual(['payment.succeeded']);
    // A failed refund takes nothing: the whole amount can be asked for again.
    expect((await refund(t, key, { payment_id: paymentId })).body).toMatchObject({ amount_cents: 1999 });
  });
});

describe('cancelling', () => {
  it('when a PENDING refund is cancelled, then it is CANCELLED with refund.updated, the processor will not settle it, and its amount is free again', async () => {
    const { paymentId } = await paidPayment(t, key);
    const res = await refund(t, key, { payment_id: paymentId, amount: 999 });
    // A slow processor: the refund stays pending on its side until cancelled.
    await t.sql`update simulator_refunds set settle_at = now() + interval '1 hour' where refund_id = ${res.body.id}`;
    const cancelled = await t.request('POST', `/v1/refunds/${res.body.id}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: res.body.id, status: 'CANCELLED' });
    expect(await refundRow(t, res.body.id)).toMatchObject({ status: 'CANCELLED' });
    expect((await t.sql`select status from simulator_refunds where refund_id = ${res.body.id}`)[0]).toEqual({ status: 'canceled' });
    expect(await eventsFor(t, res.body.id)).toEqual(['refund.created', 'refund.updated']);
    expect((await eventObjects(t, res.body.id))[1]!.object).toEqual(cancelled.body);
    expect((await refund(t, key, { payment_id: paymentId })).body).toMatchObject({ amount_cents: 1999 });
    const again = await t.request('POST', `/v1/refunds/${res.body.id}/cancel`, { key });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('resource_invalid_state');
  });

  it('when a refund has settled, then cancelling it answers 400 resource_invalid_state and changes nothing', async () => {
    const { paymentId } = await paidPayment(t, key);
    const res = await refund(t, key, { payment_id: paymentId, amount: 100 });
    await settled(res.body.id);
    const cancel = await t.request('POST', `/v1/refunds/${res.body.id}/cancel`, { key });
    expect(cancel.status).toBe(400);
    expect(cancel.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_invalid_state' });
    expect(await refundRow(t, res.body.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await eventsFor(t, res.body.id)).toEqual(['refund.created', 'refund.updated']);
  });

  it('when the processor settled a refund before the cancel reached it, then the settlement is recorded and the cancel refused', async () => {
    const { paymentId } = await paidPayment(t, key);
    const res = await refund(t, key, { payment_id: paymentId, amount: 100 });
    // The processor settled it, but our job has not recorded it yet.
    await t.s.queues.get('refunds').remove(res.body.id);
    await t.sql`update simulator_refunds set settle_at = now() - interval '1 second' where refund_id = ${res.body.id}`;
    const cancel = await t.request('POST', `/v1/refunds/${res.body.id}/cancel`, { key });
    expect(cancel.status).toBe(400);
    expect(cancel.body.error.code).toBe('resource_invalid_state');
    expect(await refundRow(t, res.body.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await paymentRow(t, paymentId)).toMatchObject({ amount_refunded_cents: 100 });
  });
});

describe('errors', () => {
  it('when the payment is not SUCCEEDED, then 400 naming payment_id', async () => {
    const cs = await createSession(t, key);
    await new Payer(t).pay(cs.id, { card_number: CARDS.declined });
    const [failed] = await t.sql`select id from payments where checkout_session_id = ${cs.id}`;
    const res = await refund(t, key, { payment_id: failed!.id });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'payment_id' });
    expect(await t.sql`select id from refunds where payment_id = ${failed!.id}`).toEqual([]);
  });

  it.each([
    ['zero', 0],
    ['negative', -5],
    ['fractional', 1.5],
    ['a string', '100'],
    ['above the payment', 2000],
  ])('when the amount is %s, then 400 naming amount and no refund', async (_name, amount) => {
    const { paymentId } = await paidPayment(t, key);
    const res = await refund(t, key, { payment_id: paymentId, amount });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    expect(await t.sql`select id from refunds where payment_id = ${paymentId}`).toEqual([]);
  });

  it('when payment_id is missing, unknown, or a field is unknown or a reason invalid, then the 4xx names it', async () => {
    const { paymentId } = await paidPayment(t, key);
    expect((await refund(t, key, {})).body.error).toMatchObject({ code: 'parameter_missing', param: 'payment_id' });
    const missing = await refund(t, key, { payment_id: 'pay_0000000000000000000000000' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'payment_id' });
    expect((await refund(t, key, { payment_id: 'cus_x' })).status).toBe(404);
    expect((await refund(t, key, { payment_id: paymentId, amount_cents: 5 })).body.error).toMatchObject({ code: 'parameter_unknown', param: 'amount_cents' });
    expect((await refund(t, key, { payment_id: paymentId, reason: 'bored' })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'reason' });
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    expect((await refund(t, key, { payment_id: paymentId, metadata: tooMany })).body.error).toMatchObject({ param: 'metadata' });
    expect(await t.sql`select id from refunds where payment_id = ${paymentId}`).toEqual([]);
  });

  it('when the payment is disputed, then 400 charge_disputed naming payment_id', async () => {
    const { paymentId } = await paidPayment(t, key);
    await t.sql`update payments set disputed = true where id = ${paymentId}`;
    const res = await refund(t, key, { payment_id: paymentId });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'charge_disputed', param: 'payment_id' });
    expect(await t.sql`select id from refunds where payment_id = ${paymentId}`).toEqual([]);
  });

  it('when an unknown refund is read or cancelled, then 404 resource_missing', async () => {
    expect((await t.request('GET', '/v1/refunds/re_0000000000000000000000000', { key })).status).toBe(404);
    expect((await t.request('POST', '/v1/refunds/re_0000000000000000000000000/cancel', { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/refunds/nope', { key })).body.error.code).toBe('resource_missing');
  });
});

describe('idempotency', () => {
  it('when a refund is retried with the same Idempotency-Key, then the first answer is replayed and one refund exists', async () => {
    const { paymentId } = await paidPayment(t, key);
    const headers = { 'idempotency-key': `refund-${paymentId}` };
    const a = await refund(t, key, { payment_id: paymentId, amount: 300 }, headers);
    const b = await refund(t, key, { payment_id: paymentId, amount: 300 }, headers);
    expect(a.status).toBe(200);
    expect(b.body.id).toBe(a.body.id);
    expect(await t.sql`select id from refunds where payment_id = ${paymentId}`).toEqual([{ id: a.body.id }]);
  });
});

describe('isolation across accounts and modes', () => {
  it("when another account or the live key names a payment or refund, then 404 as if missing, and lists show none", async () => {
    const { paymentId } = await paidPayment(t, key);
    const mine = await refund(t, key, { payment_id: paymentId, amount: 100 });
    const other = await t.account();
    for (const k of [other.test, other.live, (await t.account()).live]) {
      const res = await refund(t, k, { payment_id: paymentId });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'payment_id' });
      expect((await t.request('GET', `/v1/refunds/${mine.body.id}`, { key: k })).status).toBe(404);
      expect((await t.request('POST', `/v1/refunds/${mine.body.id}/cancel`, { key: k })).status).toBe(404);
      expect((await t.request('GET', `/v1/refunds?payment_id=${paymentId}`, { key: k })).body.data).toEqual([]);
    }
    expect(await t.sql`select count(*)::int as n from refunds where payment_id = ${paymentId}`).toEqual([{ n: 1 }]);
  });
});

describe('listing', () => {
  it('when refunds are listed by payment_id, then newest first and the cursors walk the filtered set', async () => {
    const a = await paidPayment(t, key, { amount: 1000 });
    const b = await paidPayment(t, key, { amount: 1000 });
    const ids: string[] = [];
    for (const p of [a, b, a, b, a]) ids.push((await refund(t, key, { payment_id: p.paymentId, amount: 100 })).body.id);
    const ofA = [ids[4], ids[2], ids[0]];
    const page1 = (await t.request('GET', `/v1/refunds?payment_id=${a.paymentId}&limit=2`, { key })).body;
    expect(page1).toMatchObject({ object: 'list', url: '/v1/refunds', has_more: true });
    expect(page1.data.map((r: { id: string }) => r.id)).toEqual(ofA.slice(0, 2));
    const page2 = (await t.request('GET', `/v1/refunds?payment_id=${a.paymentId}&limit=2&starting_after=${ofA[1]}`, { key })).body;
    expect(page2).toMatchObject({ has_more: false });
    expect(page2.data.map((r: { id: string }) => r.id)).toEqual([ofA[2]]);
    const back = (await t.request('GET', `/v1/refunds?payment_id=${a.paymentId}&limit=2&ending_before=${ofA[2]}`, { key })).body;
    expect(back.data.map((r: { id: string }) => r.id)).toEqual(ofA.slice(0, 2));
    const all = (await t.request('GET', '/v1/refunds?limit=5', { key })).body;
    expect(all.data.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect((await t.request('GET', '/v1/refunds?payment_id=x&starting_after=bad', { key })).body.error).toMatchObject({ param: 'starting_after' });
  });
});

describe('the hosted receipt', () => {
  it('when a payment has refunds, then its receipt page lists each with amount, status and date, and the amount refunded', async () => {
    const { paymentId, sessionId } = await paidPayment(t, key, { amount: 5000 });
    const done = await settled((await refund(t, key, { payment_id: paymentId, amount: 1250 })).body.id);
    expect(done.status).toBe('SUCCEEDED');
    const page = await new Payer(t).get(`/checkout/${sessionId}/receipt`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<caption>Refunds</caption>');
    expect(page.html).toMatch(/<td>[A-Z][a-z]{2} \d{1,2}, \d{4}, [^<]+ UTC<\/td><td>Refunded<\/td><td class="num">\$12\.50<\/td>/);
    expect(page.html).toContain('Amount refunded');
  });
});

describe('payment-link analytics', () => {
  it('when a link payment is partly refunded, then analytics show the refunded amount and the net, and the gross figures stay', async () => {
    const link = await createLink(t, key);
    const { sessionId } = await payThroughLink(t, `${link.url}?src=QR`);
    const [session] = await t.sql`select payment_id from checkout_sessions where id = ${sessionId}`;
    await settled((await refund(t, key, { payment_id: session!.payment_id, amount: 1000 })).body.id);
    const analytics = (await t.request('GET', `/v1/payment-links/${link.id}/analytics`, { key })).body;
    expect(analytics).toMatchObject({ payments: 1, amount_collected_cents: 2500, amount_refunded_cents: 1000, net_collected_cents: 1500 });
    // views are counted through a buffer flushed later: not what this test is about.
    expect(analytics.sources.find((x: { source: string }) => x.source === 'QR')).toMatchObject({
      source: 'QR', payments: 1, amount_collected_cents: 2500, amount_refunded_cents: 1000, net_collected_cents: 1500,
    });
  });
});
