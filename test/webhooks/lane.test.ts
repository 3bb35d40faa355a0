import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.ts';
import { RUNS_PER_SLOT, startFirstAttempts } from '../../src/webhooks/first-attempts.ts';
import { reconcileDeliveries } from '../../src/webhooks/deliver.ts';
import { Lane } from '../../src/webhooks/lane.ts';
import { startWorkers, type RunningWorkers } from '../../workers/index.ts';
import { webhookDeliveryWorker, webhookThrottledWorker } from '../../workers/webhook-delivery.ts';
import { watchJobs } from '../helpers/jobs.ts';
import { useReceiver } from '../helpers/receiver.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, deliveryRows, emit } from './helpers.ts';

// The first-attempt lane (src/webhooks/lane.ts, first-attempts.ts): no workers of its own at first,
// each test decides who delivers. A short lock (the lane's lease) and a short attempt timeout.
const t = useTestServer({ env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WORKER_LOCK_MS: '1000', WEBHOOK_TIMEOUT_MS: '1500' } });
const rx = useReceiver();
let workers: RunningWorkers | null = null;

afterEach(async () => {
  rx.setBehaviour(() => 200);
  await workers?.close();
  workers = null;
});
afterAll(async () => workers?.close());

const lane = () => new Lane(t.s.config.redisPrefix);
const startDeliveryWorkers = async () => (workers = await startWorkers(t.s, [webhookDeliveryWorker as never, webhookThrottledWorker as never]));
const reclaimed = async () => (await t.s.metrics.webhookLaneReclaimed.get()).values[0]?.value ?? 0;

describe('the first-attempt lane', () => {
  it('when deliveries are pushed, taken, renewed and ended, then each is held once, oldest first, and a lease that runs out is taken again', async () => {
    // A lane of its own under this deployment's prefix: the scripts on real Redis.
    const l = new Lane(`${t.s.config.redisPrefix}:scripts`);
    const r = t.s.redis;
    expect(await l.push(r, ['d1', 'd2', 'd3'])).toBe(3);
    expect(await l.push(r, ['d1', 'd2'])).toBe(0); // already waiting
    expect(await l.take(r, 2, 60_000)).toEqual({ ids: ['d1', 'd2'], reclaimed: 0 });
    expect(await l.push(r, ['d1', 'd4'])).toBe(1); // d1 is taken: not added again
    expect(await l.holds(r, ['d1', 'd2', 'd3', 'd4', 'd5'])).toEqual([true, true, true, true, false]);
    expect(await l.counts(r)).toEqual({ waiting: 2, active: 2 });

    await l.done(r, ['d1']);
    await l.remove(r, ['d4']); // paused or cancelled while waiting
    expect(await l.holds(r, ['d1', 'd4'])).toEqual([false, false]);
    expect(await l.counts(r)).toEqual({ waiting: 1, active: 1 });

    // d2's worker renews its lease to 1 ms and stops renewing (killed): once Redis's clock passes it,
    // the next take hands d2 out again, before the waiting d3.
    await l.renew(r, ['d2'], 1);
    await eventually(async () => {
      const [sec, us] = await r.time();
      return Number(await r.zscore(l.active, 'd2')) < Number(sec) * 1000 + Number(us) / 1000;
    });
    expect(await l.take(r, 1, 60_000)).toEqual({ ids: ['d2'], reclaimed: 1 });
    expect(await l.take(r, 5, 60_000)).toEqual({ ids: ['d3'], reclaimed: 0 });
    expect(await l.take(r, 5, 60_000)).toEqual({ ids: [], reclaimed: 0 });
    // d3's run fails: put back, due in a minute, it is held (waiting) but not handed out before then.
    await l.release(r, ['d3'], 60_000);
    expect(await l.counts(r)).toEqual({ waiting: 1, active: 1 });
    expect(await l.take(r, 5, 60_000)).toEqual({ ids: [], reclaimed: 0 });
    expect(await l.holds(r, ['d3'])).toEqual([true]);
    await l.release(r, ['d3'], 0); // no longer taken: nothing to put back
    expect(await l.counts(r)).toEqual({ waiting: 1, active: 1 });
    await l.done(r, ['d2']);
    await r.del(l.ready);
    expect(await l.counts(r)).toEqual({ waiting: 0, active: 0 });
  });

  it('when the run of a delivery fails (Postgres unreachable), then it is put back in the lane, due a second later, and sent once Postgres answers', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: `${rx.url}/pg-down` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const [row] = await deliveryRows(t, event.id);
    // A worker whose Postgres refuses every connection.
    const unreachable = postgres('postgres://postgres@127.0.0.1:1/none', { connect_timeout: 1, max: 1 });
    const broken = startFirstAttempts({ ...t.s, sql: unreachable } as unknown as Services, 5);
    try {
      await eventually(async () => (await lane().counts(t.s.redis)).active === 0 && (await t.s.redis.zscore(lane().ready, row!.id)) !== null);
    } finally {
      await broken.stop();
      await unreachable.end();
    }
    const [sec, us] = await t.s.redis.time();
    const due = Number(await t.s.redis.zscore(lane().ready, row!.id)) - (Number(sec) * 1000 + Number(us) / 1000);
    expect(due).toBeGreaterThan(0);
    expect(due).toBeLessThanOrEqual(1000);
    expect(rx.received.filter((r) => r.path === '/pg-down')).toHaveLength(0);

    await startDeliveryWorkers();
    await eventually(async () => (await deliveryRows(t, event.id))[0]?.status === 'SUCCEEDED');
    expect(rx.received.filter((r) => r.path === '/pg-down')).toHaveLength(1);
  });

  it('when events are recorded, then each delivery waits in the lane with no BullMQ job, and the reconcile pass leaves it there', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: `${rx.url}/held` });
    const events = [];
    for (let i = 0; i < 3; i++) events.push(await emit(t, a.accountId, false, 'payment.succeeded'));
    const ids = (await Promise.all(events.map((e) => deliveryRows(t, e.id)))).flat().map((d) => d.id);
    expect(await lane().holds(t.s.redis, ids)).toEqual([true, true, true]);
    for (const id of ids) expect(await t.s.queues.get('webhook-delivery').getJob(id)).toBeUndefined();

    // Due and PENDING, but held by the lane: not enqueued again (it would be sent twice).
    expect(await reconcileDeliveries(t.s)).toBe(0);
    await startDeliveryWorkers();
    for (const e of events) await eventually(async () => (await deliveryRows(t, e.id))[0]?.status === 'SUCCEEDED');
    expect(rx.received.filter((r) => r.path === '/held').map((r) => JSON.parse(r.body).id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(await lane().holds(t.s.redis, ids)).toEqual([false, false, false]);
  });

  it('when the worker that took a delivery dies before sending it, then another takes it once the lease runs out and sends it once', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: `${rx.url}/orphan` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const [row] = await deliveryRows(t, event.id);
    // A worker takes it with a lease of 1 ms and is gone: it never renews, sends or ends it.
    expect((await lane().take(t.s.redis, 10, 1)).ids).toEqual([row!.id]);
    const before = await reclaimed();

    await startDeliveryWorkers();
    await eventually(async () => (await deliveryRows(t, event.id))[0]?.status === 'SUCCEEDED');
    expect((await deliveryRows(t, event.id))[0]!.attempt_count).toBe(1);
    expect(rx.received.filter((r) => r.path === '/orphan')).toHaveLength(1);
    expect((await reclaimed()) - before).toBe(1);
  });

  it('when the records of sent attempts wait on Postgres, then the next requests go out meanwhile, up to RUNS_PER_SLOT runs per slot, and each delivery is recorded once', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: `${rx.url}/records-wait` });
    const concurrency = 2;
    const events: Array<Awaited<ReturnType<typeof emit>>> = [];
    for (let i = 0; i < concurrency * RUNS_PER_SLOT + 4; i++) events.push(await emit(t, a.accountId, false, 'payment.succeeded'));
    const ids = (await Promise.all(events.map((e) => deliveryRows(t, e.id)))).flat().map((d) => d.id);
    const arrived = () => rx.received.filter((r) => r.path === '/records-wait').length;
    // The delivery rows locked by another transaction: each record (an update of its row) waits.
    const blocker = await t.sql.reserve();
    await blocker`begin`;
    await blocker`select id from webhook_deliveries where id = any(${ids}) for update`;
    const worker = startFirstAttempts(t.s, concurrency);
    try {
      // Not `concurrency` requests: each run frees its slot once its request has ended.
      await eventually(async () => arrived() === concurrency * RUNS_PER_SLOT, 10_000, 20);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(arrived()).toBe(concurrency * RUNS_PER_SLOT);
      expect((await lane().counts(t.s.redis)).active).toBe(concurrency * RUNS_PER_SLOT);
    } finally {
      await blocker`rollback`;
      blocker.release();
    }
    try {
      await eventually(async () => (await Promise.all(events.map((e) => deliveryRows(t, e.id)))).flat().every((r) => r.status === 'SUCCEEDED'), 10_000);
    } finally {
      await worker.stop();
    }
    expect(arrived()).toBe(events.length);
    expect(new Set(rx.received.filter((r) => r.path === '/records-wait').map((r) => JSON.parse(r.body).id)).size).toBe(events.length);
    expect((await Promise.all(events.map((e) => deliveryRows(t, e.id)))).flat().every((r) => r.attempt_count === 1)).toBe(true);
    expect(await lane().holds(t.s.redis, ids)).toEqual(ids.map(() => false));
  });

  it('when an endpoint gets a rate limit while its delivery waits in the lane, then the delivery goes through the throttled queue', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/late-limit` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const [row] = await deliveryRows(t, event.id);
    expect((await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { rate_limit: 5 } })).status).toBe(200);

    const throttled = await watchJobs(t.s.queues.get('webhook-throttled'), t.s.redis);
    try {
      await startDeliveryWorkers();
      expect(await throttled.outcome(row!.id)).toEqual({ state: 'completed', returnvalue: 'attempt 1 succeeded (200)' });
    } finally {
      await throttled.close();
    }
    expect((await deliveryRows(t, event.id))[0]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
    expect(rx.received.filter((r) => r.path === '/late-limit')).toHaveLength(1);
  });

  it('when the workers stop while an attempt waits on its receiver, then stopping waits for it to be recorded, and its retry is a job', async () => {
    const a = await t.account();
    rx.setBehaviour((_n, r) => (r.path === '/slow' ? 'hang' : 200));
    await createEndpoint(t, a.test, { url: `${rx.url}/slow` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const [row] = await deliveryRows(t, event.id);
    await startDeliveryWorkers();
    await rx.waitFor(1, 10_000, (r) => r.path === '/slow');

    // Before close() resolves, the attempt times out (WEBHOOK_TIMEOUT_MS) and is recorded.
    await workers!.close();
    workers = null;
    const [after] = await deliveryRows(t, event.id);
    expect(after).toMatchObject({ status: 'PENDING', attempt_count: 1 });
    expect(await lane().holds(t.s.redis, [row!.id])).toEqual([false]);
    const job = await t.s.queues.get('webhook-delivery').getJob(row!.id);
    expect(await job!.getState()).toBe('delayed');
    // Attempts 2 to 7 are left to the job, each after the schedule's wait (base × 2^(n-1)).
    expect(job!.opts).toMatchObject({ attempts: 6, backoff: { type: 'exponential', delay: t.s.config.webhookBackoffBaseMs * 2 } });
  });

  it('when every Redis key of the deployment is deleted while deliveries are waiting and in flight, then the repair pass brings back what was lost and every event arrives', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: `${rx.url}/flushed` });
    await startDeliveryWorkers();
    const events = await Promise.all(Array.from({ length: 120 }, () => emit(t, a.accountId, false, 'payment.succeeded')));
    // Some are sent, some taken, some waiting: the lane's keys (and the queues') go, whatever their state.
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
    if (keys.length > 0) await t.s.redis.del(...keys);

    const arrived = () => new Set(rx.received.filter((r) => r.path === '/flushed').map((r) => JSON.parse(r.body).id as string));
    await eventually(async () => {
      await reconcileDeliveries(t.s);
      return events.every((e) => arrived().has(e.id));
    }, 30_000, 200);
    // An attempt is recorded just after its request arrives: the last ones a moment later.
    const rows = await eventually(async () => {
      const all = (await Promise.all(events.map((e) => deliveryRows(t, e.id)))).flat();
      return all.every((r) => r.status !== 'PENDING') ? all : undefined;
    }, 10_000, 100);
    expect(rows.filter((r) => r.status !== 'SUCCEEDED')).toEqual([]);
    // Sent again only where the flush took a delivery's lease while its attempt was in flight.
    expect(rows.every((r) => r.attempt_count === 1)).toBe(true);
  });
});
