import type { WorkerDefinition } from './types.ts';

/** Hourly housekeeping: idempotency keys are kept 24 hours, then removed. */
export const maintenanceWorker: WorkerDefinition = {
  queue: 'maintenance',
  concurrency: 1,
  schedules: () => [{ id: 'idempotency-cleanup', everyMs: 3_600_000, name: 'idempotency-cleanup' }],
  async process(job, s) {
    if (job.name === 'idempotency-cleanup') {
      const removed = await s.sql`delete from idempotency_keys where created_at < now() - interval '24 hours'`;
      return { removed: removed.count };
    }
    return undefined;
  },
};
