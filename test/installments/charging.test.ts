import type { Job } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { chargePart, SETTLE_CHARGES_AFTER_MS, settleStuckCharges } from '../../src/installments/charge.ts';
import { chargeJobId } from '../../src/installments/jobs.ts';
import type { Processor } from '../../src/processor/types.ts';
import { installmentsWorker } from '../../workers/installments.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { createInstallmentLink, eventTypes, partsOf, paymentsOfPlan, startPlan } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

// The charge of a later part, without workers (the real calendar: parts are a month apart), run
// by hand: never twice, whoever runs it and however often; a crash on either side of the processor
// call settled by the sweeper with one charge; advance-time charging what is due by then.

const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const inAMonth = () => new Date(Date.now() + 32 * 86_400_000);
const simulatorCharges = async (paymentIds: string[]) =>
  (await t.sql`select count(*)::int as n from simulator_attempts where attempt_id = any(${paymentIds}::text[]) and status = 'succeeded'`)[0]!.n as number;
const job = (planId: string, number: number, attempt: number) => ({ id: chargeJobId(planId, number, attempt), data: { planId, number } }) as unknown as Job<{ planId: string; number: number }>;

describe('a later part is charged once', () => {
  it('when a part is not due yet, then nothing is charged; by its date it is, with payment.succeeded', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    expect((await chargePart(t.s, plan!.id, 2)).kind).toBe('not_due');
    expect(await paymentsOfPlan(t, plan!.id)).toHaveLength(1);
    const out = await chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() });
    expect(out.kind).toBe('paid');
    const [, second] = await paymentsOfPlan(t, plan!.id);
    expect(await eventTypes(t, second!.id)).toEqual(['payment.succeeded']);
    expect((await partsOf(t, plan!.id))[1]).toMatchObject({ status: 'PAID', attempt_count: 1, payment_id: second!.id });
  });

  it('when the handler runs 20 times at once on the same part, and a job is run twice, then exactly one charge is made (5 rounds)', async () => {
    const link = await createInstallmentLink(t, key);
    for (let round = 0; round < 5; round++) {
      const { plan } = await startPlan(t, link.url);
      const outs = await Promise.all(Array.from({ length: 20 }, () => chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() })));
      expect(outs.filter((o) => o.kind === 'paid')).toHaveLength(1);
      expect(outs.every((o) => ['paid', 'ended', 'in_progress'].includes(o.kind))).toBe(true);
      // The job of that attempt delivered twice more afterwards: it finds the part paid.
      await t.sql`update installments set next_attempt_at = now() - interval '1 second' where plan_id = ${plan!.id} and number = 3`;
      const twice = await Promise.all([installmentsWorker.process(job(plan!.id, 2, 1), t.s), installmentsWorker.process(job(plan!.id, 2, 1), t.s)]);
      expect(twice).toEqual(['ended', 'ended']);
      const payments = await paymentsOfPlan(t, plan!.id);
      expect(payments.filter((p) => p.installment_number === 2)).toHaveLength(1);
      expect(await simulatorCharges(payments.map((p) => p.id as string))).toBe(2); // the first part and part 2
    }
  });

  it('when ten copies of a due part\'s job, added with ids of BullMQ\'s own, run at once, then the part is charged once', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    await t.sql`update installments set next_attempt_at = now() - interval '1 second' where plan_id = ${plan!.id} and number = 2`;
    const copies = Array.from({ length: 10 }, (_, i) => ({ id: String(1000 + i), data: { planId: plan!.id, number: 2 } }) as unknown as Job<{ planId: string; number: number }>);
    const outs = await Promise.allSettled(copies.map((j) => installmentsWorker.process(j, t.s)));
    // One charges; the others find it in flight (and throw, to be tried again) or paid.
    expect(outs.filter((o) => o.status === 'fulfilled' && o.value === 'paid')).toHaveLength(1);
    expect(outs.every((o) => (o.status === 'fulfilled' ? ['paid', 'ended'].includes(o.value as string) : /in_progress/.test(String(o.reason))))).toBe(true);
    const again = await Promise.all(copies.map((j) => installmentsWorker.process(j, t.s)));
    expect(again.every((o) => o === 'ended')).toBe(true);
    const payments = await paymentsOfPlan(t, plan!.id);
    expect(payments.filter((p) => p.installment_number === 2)).toHaveLength(1);
    expect(await simulatorCharges(payments.map((p) => p.id as string))).toBe(2);
  });

  it('when two worker processes race on the same due parts, then each part is charged once', async () => {
    const second = await secondWebApp(t);
    try {
      const link = await createInstallmentLink(t, key, { installment_options: [{ count: 6, interval: 'week' }] });
      const { plan } = await startPlan(t, link.url, CARDS.visa, { plan: '6-week' });
      const due = new Date(Date.now() + 40 * 86_400_000);
      const runs = [2, 3, 4, 5, 6].flatMap((n) => [chargePart(t.s, plan!.id, n, { dueBy: due }), chargePart(second.s, plan!.id, n, { dueBy: due })]);
      await Promise.all(runs);
      // What one run left in progress (its plan had another part in flight) the next runs finish.
      for (const n of [2, 3, 4, 5, 6]) await chargePart(t.s, plan!.id, n, { dueBy: due });
      const payments = await paymentsOfPlan(t, plan!.id);
      expect(payments.map((p) => p.installment_number).sort()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(payments.every((p) => p.status === 'SUCCEEDED')).toBe(true);
      expect((await partsOf(t, plan!.id)).every((p) => p.status === 'PAID')).toBe(true);
      expect(await eventTypes(t, plan!.id)).toEqual(['installment_plan.created', 'installment_plan.completed']);
    } finally {
      await second.close();
    }
  });

  it('when a job of an earlier attempt, or of a cancelled plan, runs, then it does nothing', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    await t.sql`update installments set next_attempt_at = now() - interval '1 second' where plan_id = ${plan!.id} and number = 2`;
    expect(await installmentsWorker.process(job(plan!.id, 2, 3), t.s)).toBe('ended');
    await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key });
    expect(await installmentsWorker.process(job(plan!.id, 2, 1), t.s)).toBe('ended');
    expect(await paymentsOfPlan(t, plan!.id)).toHaveLength(1);
  });
});

describe('a later part is a payment like any other', () => {
  it('when a later part is refunded through the API, then the refund succeeds on its own intent and the plan is untouched', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    await chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() });
    const [, second] = await paymentsOfPlan(t, plan!.id);
    const refund = await t.request('POST', '/v1/refunds', { key, body: { payment_id: second!.id, amount: 1000 } });
    expect(refund.status).toBe(200);
    const { settleRefundJob } = await import('../../src/refunds/settle.ts');
    // The simulator settles a refund a moment after it was asked: that moment is moved, not waited for.
    await t.sql`update simulator_refunds set settle_at = now() where refund_id = ${refund.body.id}`;
    await settleRefundJob(t.s, refund.body.id);
    expect((await t.request('GET', `/v1/refunds/${refund.body.id}`, { key })).body.status).toBe('SUCCEEDED');
    expect((await t.request('GET', `/v1/payments/${second!.id}`, { key })).body).toMatchObject({ amount_refunded_cents: 1000, installment_plan_id: plan!.id, installment_number: 2 });
    expect((await t.request('GET', `/v1/payments?customer=${plan!.customer_id}`, { key })).body.data.map((p: { id: string }) => p.id)).toContain(second!.id);
    expect((await t.sql`select status from installment_plans where id = ${plan!.id}`)[0]!.status).toBe('ACTIVE');
  });
});

describe('a crash around the processor call', () => {
  /** The simulator with its chargeSavedCard failing after (or before) the real call: what a crash between the steps leaves. */
  function crashing(processor: Processor, when: 'after' | 'before'): () => void {
    const real = processor.chargeSavedCard.bind(processor);
    processor.chargeSavedCard = async (input) => {
      if (when === 'after') await real(input);
      throw new Error(`simulated crash ${when} the processor call`);
    };
    return () => {
      processor.chargeSavedCard = real;
    };
  }

  it.each(['after', 'before'] as const)('when the process dies %s the call, then the payment stays in flight and the sweeper records one charge', async (when) => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const restore = crashing(t.s.processors.test, when);
    let out;
    try {
      out = await chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() });
    } finally {
      restore();
    }
    expect(out.kind).toBe('in_progress');
    const [, inFlight] = await paymentsOfPlan(t, plan!.id);
    expect(inFlight).toMatchObject({ status: 'PENDING', installment_number: 2 });
    expect(inFlight!.processing_since).not.toBeNull();
    // The part cannot be charged again meanwhile, nor the plan cancelled.
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() })).kind).toBe('in_progress');
    expect((await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key })).status).toBe(400);
    // Too recent for the sweeper; then old enough.
    expect(await settleStuckCharges(t.s)).toBe(0);
    await t.sql`update payments set processing_since = now() - make_interval(secs => ${SETTLE_CHARGES_AFTER_MS / 1000 + 1}) where id = ${inFlight!.id}`;
    expect(await settleStuckCharges(t.s)).toBe(1);
    expect(await settleStuckCharges(t.s)).toBe(0);
    const payments = await paymentsOfPlan(t, plan!.id);
    expect(payments.map((p) => [p.installment_number, p.status])).toEqual([
      [1, 'SUCCEEDED'],
      [2, 'SUCCEEDED'],
    ]);
    expect(await simulatorCharges([payments[1]!.id as string])).toBe(1);
    expect(await eventTypes(t, payments[1]!.id as string)).toEqual(['payment.succeeded']);
    expect((await partsOf(t, plan!.id))[1]!.status).toBe('PAID');
  });

  it('when a checkout payment is in flight too, then each sweeper takes only its own', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const restore = crashing(t.s.processors.test, 'after');
    try {
      await chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() });
    } finally {
      restore();
    }
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where installment_plan_id = ${plan!.id} and processing_since is not null`;
    const { settleStuckPayments } = await import('../../src/checkout/settle.ts');
    expect(await settleStuckPayments(t.s)).toBe(0);
    expect(await settleStuckCharges(t.s)).toBe(1);
  });
});

describe('advance-time', () => {
  it('when time is advanced by 40 days, then the part due within it is charged and the next one is not', async () => {
    const key = (await t.account()).test; // an account of its own: advance-time acts on everything of the account
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const res = await t.request('POST', '/v1/test-helpers/advance-time', { key, body: { seconds: 40 * 86400 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ installments_charged: 1, has_more: false });
    expect((await partsOf(t, plan!.id)).map((p) => p.status)).toEqual(['PAID', 'PAID', 'SCHEDULED']);
    const again = await t.request('POST', '/v1/test-helpers/advance-time', { key, body: { seconds: 70 * 86400 } });
    expect(again.body.installments_charged).toBe(1);
    expect((await t.sql`select status from installment_plans where id = ${plan!.id}`)[0]!.status).toBe('COMPLETED');
  });
});
