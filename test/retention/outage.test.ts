import { describe, expect, it } from 'vitest';
import { startWorkers } from '../../workers/index.ts';
import { maintenanceWorker } from '../../workers/maintenance.ts';
import { postgresProxy } from '../helpers/postgres-proxy.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DAY, covers, dayStart, partitions } from './helpers.ts';

// The retention job of a worker process that reaches Postgres through a TCP proxy this test cuts:
// the job fails while Postgres is unreachable, BullMQ retries it, and once Postgres answers again a
// retry does the work. Nothing here calls the retention code itself: the running worker does.

const t = useTestServer();

describe('the retention job while Postgres is unreachable', () => {
  it('when Postgres is unreachable, then the retention job fails without leaving anything half done, and a retry makes the missing partition once Postgres is back', async () => {
    const db = new URL(t.s.config.databaseUrl);
    const proxy = await postgresProxy({ host: db.hostname, port: Number(db.port || 5432) });
    db.port = String(proxy.port());
    const worker = await secondWebApp(t, { DATABASE_URL: db.toString(), REDIS_PREFIX: t.s.config.redisPrefix });
    let running: Awaited<ReturnType<typeof startWorkers>> | undefined;
    try {
      // A partition ahead goes missing (no run for a while).
      const day10 = dayStart(Date.now()) + 10 * DAY;
      const [gone] = (await partitions(t.sql, 'webhook_deliveries')).filter((p) => p.lower_at?.getTime() === day10);
      await t.sql`drop table ${t.sql(gone!.partition)}`;

      await proxy.down();
      // The worker starts its schedules: the retention job runs at once, and fails.
      running = await startWorkers(worker.s, [maintenanceWorker]);
      const queue = worker.s.queues.get('maintenance');
      const failing = await eventually(async () => {
        const [job] = (await queue.getJobs(['delayed', 'failed', 'waiting', 'active'])).filter((j) => j.name === 'retention' && j.attemptsMade >= 1);
        return job;
      });
      expect(failing.failedReason).toMatch(/ECONNREFUSED|connect|closed/i);
      expect(covers(await partitions(t.sql), 'webhook_deliveries', day10 + 1000)).toBe(false);

      await proxy.up();
      // Read again once completed: a job read just before its completion has no return value yet
      // (a CI run read it so, then saw it in the completed set).
      const done = await eventually(async () => {
        const job = await queue.getJob(failing.id!);
        return (await job?.isCompleted()) ? queue.getJob(failing.id!) : undefined;
      }, 30_000);
      // Not `attemptsMade >= 2`: BullMQ counted 1 on a CI run where the failure above had been seen
      // (its failedReason is asserted), so the count is not what this test is about: the job that
      // failed while Postgres was away is the one that, once it is back, makes the partition.
      expect(done!.returnvalue.created).toContain(gone!.partition);
      expect(covers(await partitions(t.sql), 'webhook_deliveries', day10 + 1000)).toBe(true);
    } finally {
      await running?.close();
      await proxy.up();
      await worker.close();
      await proxy.down();
    }
  }, 60_000);
});
