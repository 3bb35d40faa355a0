import { describe, expect, it } from 'vitest';
import { refundsWorker } from '../../workers/refunds.ts';
import { useTestServer } from '../helpers/server.ts';
import { paidPayment, refund, refundRow } from './helpers.ts';
import { createSession } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

// Issue 22: test card 4000 0000 0000 7726 (scenario refund_pending) charges, and its refunds stay
// PENDING for a day at the simulator, so that a refund can be cancelled at leisure (the README's
// cancel example runs in order instead of racing the half-second settle of other cards).

const t = useTestServer({ workers: [refundsWorker as never] });

describe('the refund-pending test card', () => {
  it('when a payment made with 4000 0000 0000 7726 is refunded, then the refund stays PENDING at the processor for a day, and cancelling it makes it CANCELLED', async () => {
    const { test } = await t.account();
    const { paymentId } = await paidPayment(t, test, { amount: 1999, card: CARDS.refundPending });
    const created = await refund(t, test, { payment_id: paymentId, amount: 500 });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe('PENDING');
    const [sim] = await t.sql`select status, planned, settle_at > now() + interval '23 hours' as a_day_away from simulator_refunds where refund_id = ${created.body.id}`;
    expect(sim).toEqual({ status: 'pending', planned: 'succeeded', a_day_away: true });
    // What the settle job and the sweeper ask: still pending.
    expect(await t.s.processors.test.retrieveRefund(created.body.id, null)).toEqual({ status: 'pending' });

    const cancelled = await t.request('POST', `/v1/refunds/${created.body.id}/cancel`, { key: test });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    expect((await refundRow(t, created.body.id))?.status).toBe('CANCELLED');
  });

  it('when a session is paid with the refund_pending scenario, then the payment succeeds with that card', async () => {
    const { test } = await t.account();
    const cs = await createSession(t, test, { amount: 1200 });
    const paid = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key: test, body: { scenario: 'refund_pending' } });
    expect(paid.status).toBe(200);
    expect(paid.body.payment).toMatchObject({ status: 'SUCCEEDED', card: { brand: 'visa', last4: '7726' } });
  });
});
