import { beforeAll, describe, expect, it } from 'vitest';
import { settleStuckPayments } from '../../src/checkout/settle.ts';
import { sweepReviews } from '../../src/checkout/review.ts';
import { CARDS } from '../helpers/cards.ts';
import { signedIn, type DashClient } from '../helpers/dash-client.ts';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { createSession } from '../helpers/factories.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
let key: string;
let accountId: string;
let owner: DashClient;
let ruleId: string;
beforeAll(async () => {
  ({ test: key, accountId } = await t.account());
  owner = await signedIn(t, accountId, 'owner@shop.example');
  await t.sql`update dashboard_users set role = 'owner' where account_id = ${accountId} and email = 'owner@shop.example'`;
  const rule = await t.request('POST', '/v1/fraud/rules', { key, body: { name: 'Large orders', action: 'review', conditions: [{ attribute: 'amount_cents', operator: 'gte', value: 5000 }] } });
  ruleId = rule.body.id;
});

const payment = async (id: string) => (await t.request('GET', `/v1/payments/${id}`, { key })).body;
const sessionOf = async (id: string) => (await t.request('GET', `/v1/checkout/sessions/${id}`, { key })).body;
const capture = async (paymentId: string) => (await t.sql`select capture from simulator_attempts where attempt_id = ${paymentId}`)[0]?.capture;

/** A $75 session paid from the hosted page: the review rule holds it. */
async function held(card: string = CARDS.visa) {
  const cs = await createSession(t, key, { amount: 7500 });
  const payer = new Payer(t);
  const page = await payer.pay(cs.id, { card_number: card });
  const [row] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.id}`;
  return { cs, payer, page, paymentId: row!.id };
}

describe('payments held for review', () => {
  it('when a review rule matches, then the card is authorised not captured, the payment is held with payment.review_opened, and the payer is told', async () => {
    const before = Date.now();
    const { cs, payer, page, paymentId } = await held();
    expect(page.status).toBe(202);
    expect(page.html).toContain('Payment under review');
    expect(page.html).toContain('authorised but not charged');
    const p = await payment(paymentId);
    expect(p).toMatchObject({
      status: 'PENDING',
      fraud: { action: 'review', rule_id: ruleId, reason: 'Rule "Large orders": amount_cents >= 5000' },
      review: { status: 'open', closed_at: null, closed_by: null },
      card: { brand: 'visa', last4: '4242', country: 'US' },
    });
    // The deadline is FRAUD_REVIEW_HOURS (72) ahead.
    expect(p.review.deadline * 1000).toBeGreaterThanOrEqual(before + 72 * 3600_000 - 2000);
    expect(await capture(paymentId)).toBe('manual');
    const [opened] = await eventObjects(t, paymentId);
    expect(opened).toMatchObject({ type: 'payment.review_opened', object: { id: paymentId, review: { status: 'open' } } });
    // The session waits: its page says so, a new attempt is refused, and the in-flight sweeper leaves it alone.
    expect((await sessionOf(cs.id)).status).toBe('OPEN');
    expect((await payer.get(`/checkout/${cs.id}`)).html).toContain('Payment under review');
    await t.sql`update payments set processing_since = now() - interval '10 minutes' where id = ${paymentId}`;
    expect(await settleStuckPayments(t.s)).toBe(0);
    expect((await payment(paymentId)).status).toBe('PENDING');
  });

  it('when the owner approves a review in the dashboard, then the payment is captured and succeeds, the session completes, and the events follow in order', async () => {
    const { cs, paymentId } = await held();
    const queue = await owner.get('/dashboard/fraud');
    expect(queue.html).toContain(paymentId);
    const pageOf = await owner.get(`/dashboard/payments/${paymentId}`);
    expect(pageOf.html).toContain('Approve and charge');
    expect(pageOf.html).toContain('Rule &quot;Large orders&quot;');
    const approved = await owner.post(`/dashboard/fraud/reviews/${paymentId}/approve`, {});
    expect(approved.status).toBe(303);
    expect(approved.location).toBe(`/dashboard/payments/${paymentId}?done=review_approved#fraud`);
    const p = await payment(paymentId);
    expect(p).toMatchObject({ status: 'SUCCEEDED', review: { status: 'approved', closed_by: 'owner@shop.example' } });
    expect(p.review.closed_at).toBeGreaterThan(0);
    expect(await capture(paymentId)).toBe('captured');
    expect(await sessionOf(cs.id)).toMatchObject({ status: 'COMPLETE', payment_id: paymentId });
    expect(await eventsFor(t, paymentId)).toEqual(['payment.review_opened', 'payment.succeeded', 'payment.review_closed']);
    const closed = (await eventObjects(t, paymentId)).at(-1)!;
    expect(closed.object).toMatchObject({ status: 'SUCCEEDED', review: { status: 'approved' } });
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.completed']);
    const [audit] = await t.sql`select action, actor_label from audit_events where object_id = ${paymentId}`;
    expect(audit).toMatchObject({ action: 'payment.review_approved', actor_label: 'owner@shop.example' });
    // A second decision finds the review closed.
    const again = await owner.post(`/dashboard/fraud/reviews/${paymentId}/refuse`, {});
    expect(again.status).toBe(400);
  });

  it('when nobody decides before the deadline, then the sweeper refuses the review: the authorisation is voided, the payment fails, events in order', async () => {
    const { cs, paymentId } = await held();
    expect(await sweepReviews(t.s)).toBe(0); // not due yet
    await t.sql`update payments set review_deadline = now() - interval '1 second' where id = ${paymentId}`;
    expect(await sweepReviews(t.s)).toBe(1);
    const p = await payment(paymentId);
    expect(p).toMatchObject({ status: 'FAILED', failure_code: 'review_expired', review: { status: 'expired', closed_by: 'deadline' } });
    expect(await capture(paymentId)).toBe('voided');
    expect(await eventsFor(t, paymentId)).toEqual(['payment.review_opened', 'payment.failed', 'payment.review_closed']);
    expect((await eventObjects(t, paymentId)).at(-1)!.object.review.status).toBe('expired');
    expect((await sessionOf(cs.id)).status).toBe('OPEN');
    expect(await sweepReviews(t.s)).toBe(0);
  });

  it('when a support user tries to decide, then 403; when the owner refuses, then the payment fails as refused', async () => {
    const { paymentId } = await held();
    const support = await signedIn(t, accountId, 'support@shop.example');
    await t.sql`update dashboard_users set role = 'support' where account_id = ${accountId} and email = 'support@shop.example'`;
    expect((await support.post(`/dashboard/fraud/reviews/${paymentId}/approve`, {})).status).toBe(403);
    expect((await support.get(`/dashboard/payments/${paymentId}`)).html).not.toContain('Approve and charge');
    const refused = await owner.post(`/dashboard/fraud/reviews/${paymentId}/refuse`, {});
    expect(refused.status).toBe(303);
    expect(await payment(paymentId)).toMatchObject({ status: 'FAILED', failure_code: 'review_refused', review: { status: 'refused' } });
    expect(await capture(paymentId)).toBe('voided');
  });

  it('when a decision was taken but a crash left the processor untold, then the sweeper finishes it after a minute', async () => {
    const { paymentId } = await held();
    await t.sql`update payments set review_status = 'approving', review_closed_by = 'owner@shop.example', updated_at = now() - interval '2 minutes' where id = ${paymentId}`;
    expect(await sweepReviews(t.s)).toBe(1);
    expect(await payment(paymentId)).toMatchObject({ status: 'SUCCEEDED', review: { status: 'approved' } });
    expect(await capture(paymentId)).toBe('captured');
  });
});
