import { deleteExpiredKeys } from '../src/idempotency/store.ts';
import type { WorkerDefinition } from './types.ts';

/** Hourly housekeeping: idempotency keys are kept KEY_TTL (24 hours, src/idempotency/store.ts), then removed. */
export const maintenanceWorker: WorkerDefinition = {
  queue: 'maintenance',
  concurrency: 1,
  schedules: () => [{ id: 'idempotency-cleanup', everyMs: 3_600_000, name: 'idempotency-cleanup' }],
  async process(job, s) {
    if (job.name === 'idempotency-cleanup') return { removed: await deleteExpiredKeys(s.sql) };
    return undefined;
  },
};
