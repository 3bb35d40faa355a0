import type { ChildProcess } from 'node:child_process';
import type { Job } from 'bullmq';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DELIVER_JOB, deliveryJobs } from '../../src/webhooks/jobs.ts';
import { Lane } from '../../src/webhooks/lane.ts';
import { watchJobs } from '../helpers/jobs.ts';
import { runScript } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { startWorkers, type RunningWorkers } from '../../workers/index.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, deliveryRows, emit } from './helpers.ts';
import { useReceiver } from '../helpers/receiver.ts';

const LOCK_MS = 1000;

// No workers of its own at first: each test decides who delivers.
const t = useTestServer({ env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WORKER_LOCK_MS: String(LOCK_MS) } });
const rx = useReceiver();
let workers: RunningWorkers | null = null;
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await workers?.close();
});

/** `npm run start:worker` as its own process, on this test's database and Redis prefix. */
async function startWorkerProcess(): Promise<ChildProcess> {
  const c = t.s.config;
  const { child, out } = runScript('src/worker.ts', [], {
    PATH: process.env.PATH,
    DATABASE_URL: c.databaseUrl,
    REDIS_URL: c.redisUrl,
    REDIS_PREFIX: c.redisPrefix,
    WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
    WORKER_LOCK_MS: String(LOCK_MS),
    LOG_LEVEL: 'info',
  });
  children.push(child);
  const started = async () => {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    return /"msg":"started"/.test(out());
  };
  await eventually(started, 20_000).catch((err: Error) => {
    throw new Error(`worker process did not start (${err.message}):\n${out()}`);
  });
  return child;
}

/** Runs `work` with this test's own delivery worker, closed whatever happens. */
async function withWorker<T>(work: () => Promise<T>): Promise<T> {
  workers = await startWorkers(t.s, [webhookDeliveryWorker as never]);
  try {
    return await work();
  } finally {
    await workers.close();
    workers = null;
  }
}

describe('no event is lost', () => {
  // Each test sets the receiver's answers it needs; they are put back whatever the outcome.
  afterEach(() => rx.setBehaviour(() => 200));

  it('when the worker process is killed with SIGKILL mid-delivery, then the delivery is retried by another worker and succeeds', async () => {
    const a = await t.account();
    rx.setBehaviour((n, r) => (r.path === '/killed' && rx.received.filter((x) => x.path === '/killed').length === 1 ? 'hang' : 200));
    await createEndpoint(t, a.test, { url: `${rx.url}/killed` });
    const child = await startWorkerProcess();

    const event = await emit(t, a.accountId, false, 'checkout.session.completed');
    await rx.waitFor(1, 10_000, (r) => r.path === '/killed'); // the child is now waiting on the receiver
    const exited = new Promise((r) => child.once('exit', (_code, signal) => r(signal)));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect((await deliveryRows(t, event.id))[0]).toMatchObject({ status: 'PENDING', attempt_count: 0 });

    // Another worker: once the dead worker's lock expires, BullMQ's stall check hands it the job.
    const [row] = await withWorker(() =>
      eventually(async () => {
        const r = await deliveryRows(t, event.id);
        return r[0]?.status === 'SUCCEEDED' && r;
      }, 20_000),
    );
    expect(row!.attempt_count).toBe(1);
    const hits = rx.received.filter((r) => r.path === '/killed');
    expect(hits).toHaveLength(2);
    expect(hits.map((h) => JSON.parse(h.body).id)).toEqual([event.id, event.id]); // a duplicate, same event id
  });

  it('when every Redis key of the deployment is deleted, then the reconcile pass re-enqueues what was due and every event is delivered once', async () => {
    const a = await t.account();
    rx.setBehaviour((_n, r) => (r.path === '/flush-retry' ? 503 : 200));
    await createEndpoint(t, a.test, { url: `${rx.url}/flush` });
    const retrying = await createEndpoint(t, a.test, { url: `${rx.url}/flush-retry`, enabled_events: ['payment.failed'] });

    // One event delivered before the flush, one delivery waiting for its retry (10 min away).
    const before = await emit(t, a.accountId, false, 'payment.succeeded');
    const failing = await emit(t, a.accountId, false, 'payment.failed');
    await withWorker(async () => {
      await eventually(async () => (await deliveryRows(t, before.id))[0]?.status === 'SUCCEEDED');
      await eventually(async () => (await deliveryRows(t, failing.id)).find((d) => d.endpoint_id === retrying.id)?.attempt_count === 1);
      await eventually(async () => (await deliveryRows(t, failing.id)).every((d) => d.endpoint_id === retrying.id || d.status === 'SUCCEEDED'));
    });

    // Recorded while no worker runs: they wait in Redis, in the first-attempt lane (no job each).
    const queued: Array<{ id: string }> = [];
    for (let i = 0; i < 5; i++) queued.push(await emit(t, a.accountId, false, 'payment.succeeded'));
    expect(await new Lane(t.s.config.redisPrefix).counts(t.s.redis)).toEqual({ waiting: 5, active: 0 });
    expect((await t.s.queues.get('webhook-delivery').getJobCounts('wait')).wait).toBe(0);

    // "FLUSHALL", limited to this deployment's own keys (others share this Redis).
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
    expect(keys.length).toBeGreaterThan(0);
    await t.s.redis.del(...keys);
    expect(await t.s.redis.keys(`${t.s.config.redisPrefix}:*`)).toEqual([]);

    const repaired = (await reconcileWorker.process({} as Job, t.s)) as Record<string, number>;
    expect(repaired['webhook-deliveries']).toBe(5); // the delivered one and the one not due yet are left alone
    await withWorker(async () => {
      for (const e of queued) await eventually(async () => (await deliveryRows(t, e.id))[0]?.status === 'SUCCEEDED');

      // The retry comes due: the next pass enqueues it.
      rx.setBehaviour(() => 200);
      await t.sql`update webhook_deliveries set next_attempt_at = now() where event_id = ${failing.id} and status = 'PENDING'`;
      expect(((await reconcileWorker.process({} as Job, t.s)) as Record<string, number>)['webhook-deliveries']).toBe(1);
      await eventually(async () => (await deliveryRows(t, failing.id)).every((d) => d.status === 'SUCCEEDED'));
    });
    expect((await deliveryRows(t, failing.id)).find((d) => d.endpoint_id === retrying.id)!.attempt_count).toBe(2);

    const flushIds = rx.received.filter((r) => r.path === '/flush').map((r) => JSON.parse(r.body).id).sort();
    expect(flushIds).toEqual([before.id, failing.id, ...queued.map((e) => e.id)].sort());

    // Nothing is due any more: another pass enqueues nothing.
    expect(((await reconcileWorker.process({} as Job, t.s)) as Record<string, number>)['webhook-deliveries']).toBe(0);
  });

  it('when a job runs again for a delivery that already SUCCEEDED, then nothing is sent', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: `${rx.url}/once` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    await withWorker(async () => {
      const [row] = await eventually(async () => {
        const r = await deliveryRows(t, event.id);
        return r[0]?.status === 'SUCCEEDED' && r;
      });
      const delivery = deliveryJobs(t.s);
      expect(await delivery.queue.getJob(row!.id)).toBeUndefined(); // completed jobs are not kept
      // The job again, with the options production adds it with (retention included).
      const jobs = await watchJobs(delivery.queue, t.s.redis);
      try {
        await delivery.queue.add(DELIVER_JOB, { deliveryId: row!.id }, delivery.options(row!.id));
        expect(await jobs.outcome(row!.id)).toEqual({ state: 'completed', returnvalue: 'skipped (SUCCEEDED)' });
      } finally {
        await jobs.close();
      }
    });
    expect(rx.received.filter((r) => r.path === '/once')).toHaveLength(1);
    expect((await deliveryRows(t, event.id))[0]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
  });
});
