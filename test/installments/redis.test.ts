import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeJobId } from '../../src/installments/jobs.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createInstallmentLink, partsOf, paymentsOfPlan, startPlan } from './helpers.ts';
import { usePrivateRedis } from '../helpers/private-redis.ts';

// The running service (web and every worker) on a Redis of this file alone: flushed while parts
// are waiting for their date, and down while a first part is paid. Postgres holds the parts; the
// reconcile schedule (every second here) enqueues what Redis lost, and each part is charged once.

const redis = usePrivateRedis();
const t = useTestServer(() => ({ workers: true, env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '1000', INSTALLMENT_TEST_INTERVAL_SECONDS: '3600' } }));
afterAll(async () => {
  await redis?.start().catch(() => {}); // the server's clean-up needs its Redis
});
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

/** Makes parts of a plan due now (they were an hour away), as time passing would. */
const makeDue = (planId: string, numbers: number[]) =>
  t.sql`update installments set due_at = now() - interval '10 seconds', next_attempt_at = now() - interval '10 seconds'
        where plan_id = ${planId} and number = any(${numbers}::int[])`;

describe('Redis loses the charge jobs', () => {
  it('when Redis is flushed while parts wait for their date, then the repair pass enqueues them once due and each is charged once', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const queue = t.s.queues.get('installments');
    await eventually(async () => (await queue.getJob(chargeJobId(plan!.id, 3, 1))) !== undefined);
    expect(await (await queue.getJob(chargeJobId(plan!.id, 2, 1)))!.getState()).toBe('delayed');
    await redis.flushAll();
    expect(await queue.getJob(chargeJobId(plan!.id, 2, 1))).toBeUndefined();
    await makeDue(plan!.id, [2, 3]);
    await eventually(async () => (await partsOf(t, plan!.id)).every((p) => p.status === 'PAID'), 20_000);
    const payments = await paymentsOfPlan(t, plan!.id);
    expect(payments.map((p) => [p.installment_number, p.status]).sort()).toEqual([
      [1, 'SUCCEEDED'],
      [2, 'SUCCEEDED'],
      [3, 'SUCCEEDED'],
    ]);
    expect((await t.sql`select status from installment_plans where id = ${plan!.id}`)[0]!.status).toBe('COMPLETED');
  }, 40_000);

  it('when Redis is down while a first part is paid, then the plan is made all the same and, Redis back empty, its due parts are charged', async () => {
    const link = await createInstallmentLink(t, key);
    await redis.stop();
    const { plan, paid } = await startPlan(t, link.url);
    expect(paid.status).toBe(303);
    expect(plan).toMatchObject({ status: 'ACTIVE' });
    await redis.start();
    await makeDue(plan!.id, [2]);
    await eventually(async () => (await partsOf(t, plan!.id))[1]!.status === 'PAID', 30_000);
    expect((await paymentsOfPlan(t, plan!.id)).filter((p) => p.installment_number === 2)).toHaveLength(1);
    expect((await partsOf(t, plan!.id))[2]!.status).toBe('SCHEDULED');
  }, 60_000);
});
