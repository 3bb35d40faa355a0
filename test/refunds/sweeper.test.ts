import { beforeAll, describe, expect, it } from 'vitest';
import { settleStuckRefunds } from '../../src/refunds/settle.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { eventsFor } from '../helpers/events.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { paidPayment, paymentRow, refund, refundRow } from './helpers.ts';

// The reconcile pass only, every second, and no refunds worker: a settle job is never run, as
// after a Redis flush or a crash; only the sweeper can settle these refunds.
const t = useTestServer({ workers: [reconcileWorker], env: { RECONCILE_INTERVAL_MS: '1000' } });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

/** Older than SETTLE_PENDING_REFUNDS_AFTER_MS (60 s): what the sweeper looks for. */
const age = (id: string) => t.sql`update refunds set created_at = now() - interval '2 minutes' where id = ${id}`;

describe('the refunds-pending sweeper', () => {
  it('when a refund\'s settle job is lost, then the sweeper asks the processor and records SUCCEEDED with both events', async () => {
    const { paymentId } = await paidPayment(t, key);
    const res = await refund(t, key, { payment_id: paymentId, amount: 700 });
    expect(res.body.status).toBe('PENDING');
    await t.s.queues.get('refunds').remove(res.body.id); // the job is gone, as after a Redis flush
    // Younger than the bound: the sweeper, called here, leaves it alone (a job may still be on its way).
    await settleStuckRefunds(t.s);
    expect(await refundRow(t, res.body.id)).toMatchObject({ status: 'PENDING' });
    await age(res.body.id);
    const done = await eventually(async () => {
      const r = await refundRow(t, res.body.id);
      return r?.status !== 'PENDING' ? r : null;
    }, 10_000);
    expect(done).toMatchObject({ status: 'SUCCEEDED' });
    expect(await paymentRow(t, paymentId)).toMatchObject({ amount_refunded_cents: 700 });
    expect(await eventsFor(t, res.body.id)).toEqual(['refund.created', 'refund.updated']);
    expect(await eventsFor(t, paymentId)).toEqual(['payment.succeeded', 'payment.refunded']);
  });

  it('when a crash came between transaction 1 and the processor call, then the sweeper asks for the refund again (once) and it settles', async () => {
    const { paymentId } = await paidPayment(t, key);
    const processor = t.s.processors.test;
    const original = processor.createRefund;
    processor.createRefund = async () => {
      throw new Error('connection reset before the request was sent');
    };
    let res;
    try {
      res = await refund(t, key, { payment_id: paymentId, amount: 400 });
    } finally {
      processor.createRefund = original;
    }
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('PENDING');
    expect(await t.sql`select refund_id from simulator_refunds where refund_id = ${res.body.id}`).toEqual([]);
    await age(res.body.id);
    const done = await eventually(async () => {
      const r = await refundRow(t, res.body.id);
      return r?.status !== 'PENDING' ? r : null;
    }, 15_000);
    expect(done).toMatchObject({ status: 'SUCCEEDED' });
    expect(await t.sql`select refund_id, status, amount_cents from simulator_refunds where attempt_id = ${paymentId}`).toEqual([
      { refund_id: res.body.id, status: 'succeeded', amount_cents: 400 },
    ]);
    expect(await paymentRow(t, paymentId)).toMatchObject({ amount_refunded_cents: 400 });
  });
});
