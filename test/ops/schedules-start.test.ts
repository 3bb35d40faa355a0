import { describe, expect, it } from 'vitest';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { startWorkers } from '../../workers/index.ts';
import { logCapture } from '../helpers/logs.ts';
import { usePrivateRedis } from '../helpers/private-redis.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

// A Redis of this file alone, which the test freezes; declared before the server, whose clean-up needs it.
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
