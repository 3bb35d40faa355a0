import { Worker } from 'bullmq';
import type { Services } from '../src/services.ts';
import { linkCountersWorker } from './link-counters.ts';
import { maintenanceWorker } from './maintenance.ts';
import { processorWorker } from './processor.ts';
import { reconcileWorker } from './reconcile.ts';
import { sessionExpiryWorker } from './session-expiry.ts';
import type { WorkerDefinition } from './types.ts';
import { webhookDeliveryWorker } from './webhook-delivery.ts';

/** Every worker of the service; `npm run start:worker` and `npm start` run them all. */
export const WORKERS: WorkerDefinition<never>[] = [maintenanceWorker, reconcileWorker, linkCountersWorker, webhookDeliveryWorker, sessionExpiryWorker, processorWorker];

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

export async function startWorkers(s: Services, defs: WorkerDefinition<never>[] = WORKERS): Promise<RunningWorkers> {
  const workers: Worker[] = [];
  for (const def of defs) {
    const log = s.log.child({ queue: def.queue });
    const worker = new Worker(def.queue, (job) => def.process(job as never, s), {
      connection: s.redis.duplicate({ maxRetriesPerRequest: null }),
      prefix: s.config.redisPrefix,
      concurrency: def.concurrency,
      // A worker that dies mid-job leaves a lock; once it expires, the stall check hands the job to another worker.
      lockDuration: s.config.workerLockMs,
      stalledInterval: s.config.workerLockMs,
      ...def.keep,
    });
    worker.on('failed', (job, err) => log.warn({ jobId: job?.id, name: job?.name, attempt: job?.attemptsMade, err: err.message }, 'job failed'));
    worker.on('error', (err) => log.error({ err }, 'worker error'));
    workers.push(worker);
    for (const sch of def.schedules?.(s) ?? []) {
      await s.queues.get(def.queue).upsertJobScheduler(sch.id, { every: sch.everyMs }, { name: sch.name });
    }
  }
  return {
    workers,
    // close() lets the jobs in flight finish before it resolves.
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
