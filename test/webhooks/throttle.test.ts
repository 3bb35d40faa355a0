import type { ChildProcess } from 'node:child_process';
import type { Job } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import type { ApiObject } from '../../src/events/presenter.ts';
import { jobRun, runDelivery } from '../../src/webhooks/deliver.ts';
import { recordEvents } from '../../src/webhooks/outbox.ts';
import type { Services } from '../../src/services.ts';
import { throttleKey } from '../../src/webhooks/throttle.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { webhookDeliveryWorker, webhookThrottledWorker } from '../../workers/webhook-delivery.ts';
import { runScript } from '../helpers/process.ts';
import { startReceiver, type Received } from '../helpers/receiver.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint } from './helpers.ts';

// Issue 26, point 2: rate_limit per endpoint, across every worker process; other endpoints unslowed.

const BACKOFF_MS = 500;
const env = { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: String(BACKOFF_MS), WORKER_LOCK_MS: '2000' };
// This process runs one delivery worker; a second one runs in a child process (startWorkerProcess).
const t = useTestServer({ workers: [webhookDeliveryWorker as never, webhookThrottledWorker as never], env });
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** `npm run start:worker` as its own process, on this test's database and Redis prefix. */
async function startWorkerProcess(): Promise<void> {
  const c = t.s.config;
  const { child, out } = runScript('src/worker.ts', [], {
    PATH: process.env.PATH,
    DATABASE_URL: c.databaseUrl,
    REDIS_URL: c.redisUrl,
    REDIS_PREFIX: c.redisPrefix,
    LOG_LEVEL: 'info',
    ...env,
  });
  children.push(child);
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`worker process exited with ${child.exitCode}:\n${out()}`);
    return /"msg":"started"/.test(out());
  }, 20_000);
}

/** `n` events about `n` customers, recorded in one transaction (deliveries and jobs as the service makes them). */
async function emitMany(t: TestServer, accountId: string, n: number): Promise<string[]> {
  const inputs = Array.from({ length: n }, (_, i) => ({
    accountId,
    type: 'payment.succeeded' as const,
    object: { id: `cus_${String(i).padStart(26, '0')}`, object: 'customer', livemode: false } as ApiObject,
  }));
  const events = await withTx(t.s, t.s.log, (tx) => recordEvents(tx, t.s, inputs));
  return events.map((e) => e.id);
}

/**
 * The most arrivals within any window of 700 ms. The throttle spaces its slots (r a second: r + 1
 * slots span a whole second); the receiver sees them later by what the loaded machine adds to each
 * (the full suite on 2 cores: calendar-second bins once counted 6 arrivals at 5/s). A window of
 * 1,000 − 2 × 150 ms allows 150 ms of such lateness at either end, and still catches a burst: r + 1
 * arrivals inside it mean the slots came closer than the rate allows. The average rate is checked
 * apart, over the whole backlog.
 */
const mostIn700ms = (got: Received[]): number => {
  const at = got.map((r) => r.at).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < at.length; j++) {
    while (at[j]! - at[i]! >= 700) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
};

describe('per-endpoint throttle', () => {
  it('when an endpoint is throttled to 5/s and two worker processes share a backlog, then it never gets more than 5 a second while an unthrottled endpoint gets its backlog at once', async () => {
    await startWorkerProcess();
    const rx = await startReceiver(() => 200);
    try {
      const a = await t.account();
      const slow = await createEndpoint(t, a.test, { url: `${rx.url}/slow`, rate_limit: 5 });
      expect(slow).toMatchObject({ rate_limit: 5, ordered: false });
      await createEndpoint(t, a.test, { url: `${rx.url}/fast` });
      const started = Date.now();
      const ids = await emitMany(t, a.accountId, 25);

      const fast = await rx.waitFor(25, 15_000, (r) => r.path === '/fast');
      const fastDoneAfter = Math.max(...fast.map((r) => r.at)) - started;
      const slowGot = await rx.waitFor(25, 20_000, (r) => r.path === '/slow');
      // The unthrottled backlog is not held behind the throttled one (which needs 5 s).
      expect(fastDoneAfter).toBeLessThan(Math.max(...slowGot.map((r) => r.at)) - started - 1500);
      expect(mostIn700ms(slowGot)).toBeLessThanOrEqual(5);
      // Spread out: 25 at 5/s take at least 24 intervals of 200 ms.
      expect(Math.max(...slowGot.map((r) => r.at)) - Math.min(...slowGot.map((r) => r.at))).toBeGreaterThanOrEqual(4700);
      expect(new Set(slowGot.map((r) => JSON.parse(r.body).id))).toEqual(new Set(ids));
      // Waiting used no attempt.
      await eventually(async () => {
        const [r] = await t.sql<{ n: number }[]>`
          select count(*)::int as n from webhook_deliveries where endpoint_id = ${slow.id} and status = 'SUCCEEDED' and attempt_count = 1`;
        return r!.n === 25;
      }, 5000);
    } finally {
      await rx.close();
    }
  });

  it('when a throttled endpoint comes back from an outage, then its retries drain at its rate', async () => {
    let down = true;
    const rx = await startReceiver(() => (down ? 503 : 200));
    try {
      const a = await t.account();
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/outage`, rate_limit: 10 });
      await emitMany(t, a.accountId, 12);
      await rx.waitFor(12, 15_000);
      down = false;
      // Every delivery failed once; their retries (after BACKOFF_MS) come due together and are spread out.
      const all = await rx.waitFor(24, 20_000);
      expect(mostIn700ms(all)).toBeLessThanOrEqual(10);
      await eventually(async () => {
        const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${ep.id} and status = 'SUCCEEDED'`;
        return r!.n === 12;
      }, 10_000);
    } finally {
      await rx.close();
    }
  });

  it("when Redis loses the throttle's bucket and the jobs mid-backlog, then the reconcile pass brings them back, each is delivered once, and the rate holds", async () => {
    const rx = await startReceiver(() => 200);
    try {
      const a = await t.account();
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/flush`, rate_limit: 5 });
      const ids = await emitMany(t, a.accountId, 15);
      await rx.waitFor(4, 10_000);
      // "FLUSHALL", limited to this deployment's keys: the bucket and every job with it.
      const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
      expect(keys).toContain(throttleKey(t.s.config.redisPrefix, ep.id));
      await t.s.redis.del(...keys);
      // Workers recreate their own keys; what matters is that the deliveries are due in Postgres.
      await reconcileWorker.process({} as Job, t.s);
      const got = await rx.waitFor(15, 20_000);
      await eventually(async () => {
        const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${ep.id} and status = 'SUCCEEDED'`;
        return r!.n === 15;
      }, 10_000);
      // At most a delivery in flight at the flush goes twice (at least once, as always); none is lost.
      expect(new Set(got.map((r) => JSON.parse(r.body).id))).toEqual(new Set(ids));
      // The bucket starts full again: one delivery may follow the last one before the flush at once.
      expect(mostIn700ms(got)).toBeLessThanOrEqual(6);
    } finally {
      await rx.close();
    }
  });

  it('when the throttle cannot reach Redis, then nothing is sent, no attempt is recorded, and the job fails to be run again', async () => {
    const rx = await startReceiver(() => 200);
    try {
      const a = await t.account();
      // Paused first, so that no worker takes the delivery before this test runs it by hand.
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/down`, rate_limit: 5 });
      await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
      const [id] = await emitMany(t, a.accountId, 1);
      await t.sql`update webhook_endpoints set is_active = true where id = ${ep.id}`;
      await t.sql`update webhook_deliveries set status = 'PENDING', next_attempt_at = now() where event_id = ${id!}`;
      const [d] = await t.sql<{ id: string }[]>`select id from webhook_deliveries where event_id = ${id!}`;
      const broken = {
        defineCommand: () => {},
        webhookGcra: () => Promise.reject(new Error('Connection is closed.')),
      };
      const s = { ...t.s, redis: broken } as unknown as Services;
      const job = { data: { deliveryId: d!.id }, attemptsMade: 0, opts: {} } as Job;
      await expect(runDelivery(s, jobRun(s, job, 'token'))).rejects.toThrow('Connection is closed.');
      expect(rx.received).toHaveLength(0);
      const [row] = await t.sql`select status, attempt_count from webhook_deliveries where id = ${d!.id}`;
      expect(row).toMatchObject({ status: 'PENDING', attempt_count: 0 });
    } finally {
      await rx.close();
    }
  });

  it('when rate_limit is out of range or not a whole number, then the API answers 400 naming it', async () => {
    const a = await t.account();
    for (const rate_limit of [0, 1001, 2.5, '5']) {
      const res = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: 'http://127.0.0.1:9/x', enabled_events: ['*'], rate_limit } });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('rate_limit');
    }
    const ep = await createEndpoint(t, a.test, { url: 'http://127.0.0.1:9/x' });
    expect(ep).toMatchObject({ rate_limit: null, ordered: false });
    const patched = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { rate_limit: 7 } });
    expect(patched.body.rate_limit).toBe(7);
    const cleared = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { rate_limit: null } });
    expect(cleared.body.rate_limit).toBeNull();
  });
});
