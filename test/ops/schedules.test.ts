import { describe, expect, it } from 'vitest';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { startWorkers } from '../../workers/index.ts';
import { ScheduleKeeper } from '../../workers/schedules.ts';
import { logCapture } from '../helpers/logs.ts';
import { usePrivateRedis } from '../helpers/private-redis.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

// A Redis of this file alone, which the tests freeze and flush; declared before the server, whose clean-up needs it.
const redis = usePrivateRedis();
const logs = logCapture();
const t = useTestServer(() => ({ log: logs.log, env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '1000' } }));

describe('job schedules at start', () => {
  it('when Redis answers nothing while the workers start, then they start anyway and the schedules are made once it answers', async () => {
    const reconcile = t.s.queues.get('reconcile');
    await redis.freeze(); // connections stay open, nothing answers: each command runs into the 1 s timeout
    let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
    try {
      workers = await startWorkers(t.s, [reconcileWorker]);
      expect(logs.messages('creating job schedules failed at start; retrying every interval')).toHaveLength(1);
    } finally {
      await redis.thaw();
    }
    try {
      await eventually(async () => (await reconcile.getJobScheduler('reconcile')) !== undefined, 15_000);
      await logs.waitFor('job schedules checked again');
    } finally {
      await workers?.close();
    }
  });
});

describe('job schedules, looked at', () => {
  it('when nothing is lost, then each schedule is looked at once per its own interval; when a flush removes them, then all are made again within a tick', async () => {
    const fast = { queue: 'reconcile' as const, id: 'keeper-fast', everyMs: 1000, name: 'keeper-fast' };
    const slow = { queue: 'maintenance' as const, id: 'keeper-slow', everyMs: 3_600_000, name: 'keeper-slow' };
    const looked: Record<string, number> = {};
    const restore: Array<() => void> = [];
    for (const queue of ['reconcile', 'maintenance'] as const) {
      const q = t.s.queues.get(queue);
      const original = q.getJobScheduler;
      q.getJobScheduler = ((id: string) => {
        looked[id] = (looked[id] ?? 0) + 1;
        return original.call(q, id);
      }) as typeof q.getJobScheduler;
      restore.push(() => (q.getJobScheduler = original));
    }
    const keeper = new ScheduleKeeper(t.s, [slow, fast]);
    await keeper.start();
    try {
      expect(keeper.checkMs).toBe(1000);
      await eventually(async () => (looked[fast.id] ?? 0) >= 3, 10_000);
      // The hourly one was made at start and is not asked about again for a minute.
      expect(looked[slow.id] ?? 0).toBe(0);

      await redis.flushAll();
      const reconcile = t.s.queues.get('reconcile');
      const maintenance = t.s.queues.get('maintenance');
      await eventually(async () => (await reconcile.getJobScheduler(fast.id)) !== undefined && (await maintenance.getJobScheduler(slow.id)) !== undefined, 5_000);
      expect(looked[slow.id]).toBeGreaterThanOrEqual(1);
      const missing = logs.messages('job schedule missing from Redis; re-created').map((l) => l.scheduler);
      expect(missing).toEqual(expect.arrayContaining([fast.id, slow.id]));
    } finally {
      keeper.stop();
      for (const r of restore) r();
    }
  });
});
