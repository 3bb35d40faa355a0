import { beforeAll, describe, expect, it } from 'vitest';
import { recordProcessorDispute, syncNewDisputes } from '../../src/disputes/service.ts';
import { ownerOf } from '../../src/lib/owner.ts';
import { disputePayment } from '../../src/test-helpers/service.ts';
import { refundsWorker } from '../../workers/refunds.ts';
import { eventsFor } from '../helpers/events.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { CARDS } from '../helpers/cards.ts';
import { createSession, paidPayment } from '../helpers/factories.ts';

// The refunds worker settles refunds; no disputes worker: the sync runs when a test calls it.
const t = useTestServer({ workers: [refundsWorker as never] });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const dispute = (paymentId: string, body: Record<string, unknown> = {}, k = key) =>
  t.request('POST', `/v1/test-helpers/payments/${paymentId}/dispute`, { key: k, body });
const getPayment = async (id: string) => (await t.request('GET', `/v1/payments/${id}`, { key })).body;
const disputeRows = (paymentId: string) => t.sql`select id, processor_dispute_id from disputes where payment_id = ${paymentId}`;

/** A SUCCEEDED payment through the pay helper (the hosted page's code). */
async function paid(amount = 1999, scenario = 'succeeded'): Promise<string> {
  const cs = await createSession(t, key, { amount });
  const res = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key, body: { scenario } });
  return res.body.payment.id as string;
}

async function refund(paymentId: string, amount?: number) {
  const res = await t.request('POST', '/v1/refunds', { key, body: { payment_id: paymentId, ...(amount ? { amount } : {}) } });
  if (res.status !== 200) throw new Error(`refund: ${res.status} ${JSON.stringify(res.body)}`);
  await eventually(async () => (await t.request('GET', `/v1/refunds/${res.body.id}`, { key })).body.status === 'SUCCEEDED');
}

/** Makes the simulator's charge of a payment two seconds old: its clock moved, not waited for. */
const secondOld = (paymentId: string) => t.sql`update simulator_attempts set updated_at = now() - interval '2 seconds' where attempt_id = ${paymentId}`;

describe('disputing a payment with the test helper', () => {
  it('when a SUCCEEDED payment is disputed, then the dispute is answered at once, recorded with dispute.created and the payment is disputed, as card 0259\'s', async () => {
    const paymentId = await paid();
    const res = await dispute(paymentId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'dispute', livemode: false, payment_id: paymentId, amount_cents: 1999, currency: 'usd', reason: 'fraudulent', status: 'NEEDS_RESPONSE' });
    expect(res.body.evidence_due_by - res.body.created).toBeGreaterThanOrEqual(7 * 86_400 - 5);
    expect((await t.request('GET', `/v1/disputes/${res.body.id}`, { key })).body).toEqual(res.body);
    expect(await eventsFor(t, res.body.id)).toEqual(['dispute.created']);
    expect((await getPayment(paymentId)).disputed).toBe(true);

    // The 0259 card's dispute, made by the simulator and recorded by the sync, has the same shape.
    const viaCard = (await paidPayment(t, key, { card: CARDS.disputed })).paymentId;
    await secondOld(viaCard); // the simulator reports a 0259 charge disputed once it is a second old
    await syncNewDisputes(t.s, t.s.log);
    const [cardDispute] = (await t.request('GET', `/v1/disputes?payment_id=${viaCard}`, { key })).body.data;
    const shape = (d: Record<string, unknown>) => ({ ...d, id: undefined, payment_id: undefined, created: undefined, updated: undefined, evidence_due_by: undefined });
    expect(shape(res.body)).toEqual(shape(cardDispute));
    expect(await eventsFor(t, cardDispute.id)).toEqual(['dispute.created']);

    // The sync finds the helper's dispute recorded already: nothing more.
    await syncNewDisputes(t.s, t.s.log);
    expect(await disputeRows(paymentId)).toHaveLength(1);
    expect(await eventsFor(t, res.body.id)).toEqual(['dispute.created']);
    // And the payment now refuses refunds as a disputed one.
    const refused = await t.request('POST', '/v1/refunds', { key, body: { payment_id: paymentId } });
    expect(refused.body.error).toMatchObject({ code: 'charge_disputed' });
  });

  it('when a reason is given, then the dispute has it; an unknown reason or field is a 400 naming it', async () => {
    const paymentId = await paid();
    expect((await dispute(paymentId, { reason: 'product_not_received' })).body.reason).toBe('product_not_received');
    const other = await paid();
    expect((await dispute(other, { reason: 'bored' })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'reason' });
    expect((await dispute(other, { amount: 5 })).body.error).toMatchObject({ code: 'parameter_unknown', param: 'amount' });
    expect(await disputeRows(other)).toHaveLength(0);
  });

  it('when a payment of card 0259 is disputed by the helper before the sync, then the simulator\'s one dispute is recorded once', async () => {
    const paymentId = (await paidPayment(t, key, { card: CARDS.disputed })).paymentId;
    const res = await dispute(paymentId);
    expect(res.status).toBe(200);
    await secondOld(paymentId);
    await syncNewDisputes(t.s, t.s.log);
    expect(await disputeRows(paymentId)).toEqual([{ id: res.body.id, processor_dispute_id: expect.stringMatching(/^du_sim_/) }]);
    expect(await eventsFor(t, res.body.id)).toEqual(['dispute.created']);
  });

  it('when five disputes of one payment are asked at once, then one is recorded and the others answer charge_disputed', async () => {
    const paymentId = await paid();
    const answers = await Promise.all(Array.from({ length: 5 }, () => dispute(paymentId)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.error).toMatchObject({ type: 'invalid_request_error', code: 'charge_disputed' });
    expect(await disputeRows(paymentId)).toHaveLength(1);
  });

  it('when the disputes sync records the dispute between the helper opening it and recording it, then the helper answers 200 with that dispute, recorded once', async () => {
    const paymentId = await paid();
    const [payment] = await t.sql<{ account_id: string; livemode: boolean }[]>`select account_id, livemode from payments where id = ${paymentId}`;
    const simulator = t.s.processors.test!;
    // The processor as the sync finds it: the sync runs (and records the dispute) the moment it is opened.
    const racing = {
      ...simulator,
      openDispute: async (input: Parameters<NonNullable<typeof simulator.openDispute>>[0]) => {
        const opened = await simulator.openDispute!(input);
        await recordProcessorDispute(t.s, opened!.dispute, false, t.s.log);
        return opened;
      },
    };
    const row = await disputePayment({ ...t.s, processors: { ...t.s.processors, test: racing } }, ownerOf(payment!), paymentId, {}, t.s.log);
    expect(row).toMatchObject({ payment_id: paymentId, status: 'NEEDS_RESPONSE' });
    expect((await disputeRows(paymentId)).map((r) => r.id)).toEqual([row.id]);
    expect(await eventsFor(t, row.id)).toEqual(['dispute.created']);
    // A second call finds it opened already: refused, as before.
    expect((await dispute(paymentId)).body.error).toMatchObject({ code: 'charge_disputed' });
  });

  it('when the payment is partly refunded, then the dispute is for what is left; refunded in full, it is refused', async () => {
    const part = await paid(2000);
    await refund(part, 500);
    expect((await dispute(part)).body).toMatchObject({ status: 'NEEDS_RESPONSE', amount_cents: 1500 });

    const full = await paid(2000);
    await refund(full);
    const res = await dispute(full);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'resource_invalid_state' });
    expect(res.body.error.message).toContain('refunded in full');
    expect((await getPayment(full)).disputed).toBe(false);
  });

  it('when the payment is already disputed, FAILED, unknown or another account\'s, then it is refused and nothing is recorded', async () => {
    const paymentId = await paid();
    await dispute(paymentId);
    const twice = await dispute(paymentId);
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({ code: 'charge_disputed' });
    expect(twice.body.error.message).toContain(`/v1/disputes?payment_id=${paymentId}`);

    const cs = await createSession(t, key);
    const declined = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key, body: { scenario: 'declined' } });
    const failed = await dispute(declined.body.payment.id);
    expect(failed.status).toBe(400);
    expect(failed.body.error).toMatchObject({ code: 'resource_invalid_state' });
    expect(failed.body.error.message).toContain('FAILED');
    expect(await disputeRows(declined.body.payment.id)).toHaveLength(0);

    expect((await dispute('pay_0000000000000000000000000000')).status).toBe(404);
    const stranger = await t.account();
    const res = await dispute(paymentId, {}, stranger.test);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
  });
});
