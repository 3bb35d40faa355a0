import { describe, expect, it } from 'vitest';
import { eventsFor } from '../helpers/events.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { disputeOf, disputed, pay } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

// The jobs only make things come sooner: the reconcile pass (every second here) finds new disputes,
// decisions and actions left pending from Postgres and the processor alone.
const t = useTestServer({ workers: true, env: { RECONCILE_INTERVAL_MS: '1000' } });
const disputesQueue = () => t.s.queues.get('disputes');

/** Removes a job of the disputes queue once it is there (it is enqueued after commit). */
async function loseJob(jobId: string) {
  await eventually(() => disputesQueue().getJob(jobId));
  expect(await disputesQueue().remove(jobId)).toBe(1);
  expect(await disputesQueue().getJob(jobId)).toBeUndefined();
}

describe('repair', () => {
  it('when the sync job after a 0259 payment is lost, then the reconcile pass records the dispute anyway', async () => {
    const { test: key } = await t.account();
    const paymentId = await pay(t, key, CARDS.disputed);
    await loseJob(`sync-${paymentId}`);
    const dispute = await disputeOf(t, key, paymentId);
    expect(dispute.status).toBe('NEEDS_RESPONSE');
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created']);
    const [row] = await t.sql`select disputed from payments where id = ${paymentId}`;
    expect(row!.disputed).toBe(true);
  });

  it("when the Redis keys of the service's prefix are deleted, then disputes are still recorded and decided", async () => {
    const { test: key } = await t.account();
    const paymentId = await pay(t, key, CARDS.disputed);
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:disputes:*`);
    expect(keys.length).toBeGreaterThan(0);
    await t.s.redis.del(...keys);
    const dispute = await disputeOf(t, key, paymentId);
    const res = await t.request('PATCH', `/v1/disputes/${dispute.id}`, { key, body: { evidence: { uncategorized_text: 'winning_evidence' }, submit: true } });
    expect(res.body.status).toBe('UNDER_REVIEW');
    await loseJob(`decide-${dispute.id}`);
    await eventually(async () => (await t.request('GET', `/v1/disputes/${dispute.id}`, { key })).body.status === 'WON');
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created', 'dispute.updated', 'dispute.closed']);
  });

  it('when a submit was committed but a crash came before the processor call, then the sweeper sends it and records UNDER_REVIEW then WON', async () => {
    const { test: key } = await t.account();
    const { dispute } = await disputed(t, key);
    // What transaction 1 of a submit leaves, a minute and more ago, with no call made since.
    await t.sql`
      update disputes set evidence = ${t.sql.json({ uncategorized_text: 'winning_evidence' })}, pending_action = 'submit',
        action_since = now() - interval '61 seconds'
      where id = ${dispute.id}`;
    const [sim] = await t.sql`select status from simulator_disputes where attempt_id = ${dispute.payment_id}`;
    expect(sim!.status).toBe('needs_response');
    await eventually(async () => (await t.request('GET', `/v1/disputes/${dispute.id}`, { key })).body.status === 'WON');
    const [row] = await t.sql`select pending_action, action_since from disputes where id = ${dispute.id}`;
    expect(row).toEqual({ pending_action: null, action_since: null });
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created', 'dispute.updated', 'dispute.closed']);
  });

  it('when a close is left pending, then other changes are refused until the sweeper closes it as LOST', async () => {
    const { test: key } = await t.account();
    const { dispute } = await disputed(t, key);
    await t.sql`update disputes set pending_action = 'close', action_since = now() - interval '30 seconds' where id = ${dispute.id}`;
    const refused = await t.request('PATCH', `/v1/disputes/${dispute.id}`, { key, body: { evidence: { customer_name: 'Ada' } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'resource_invalid_state', param: 'evidence' });
    await t.sql`update disputes set action_since = now() - interval '61 seconds' where id = ${dispute.id}`;
    await eventually(async () => (await t.request('GET', `/v1/disputes/${dispute.id}`, { key })).body.status === 'LOST');
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created', 'dispute.closed']);
  });
});
