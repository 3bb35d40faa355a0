import { deleteEndedSessions } from '../src/dashboard/store.ts';
import { deleteExpiredKeys } from '../src/idempotency/store.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * Hourly housekeeping: idempotency keys are kept KEY_TTL (24 hours, src/idempotency/store.ts),
 * then removed; dashboard sessions past their limits and spent set-password links are removed.
 */
export const maintenanceWorker: WorkerDefinition = {
  queue: 'maintenance',
  concurrency: 1,
  schedules: () => [
    { id: 'idempotency-cleanup', everyMs: 3_600_000, name: 'idempotency-cleanup' },
    { id: 'dashboard-sessions-cleanup', everyMs: 3_600_000, name: 'dashboard-sessions-cleanup' },
  ],
  async process(job, s) {
    if (job.name === 'idempotency-cleanup') return { removed: await deleteExpiredKeys(s.sql) };
    if (job.name === 'dashboard-sessions-cleanup') {
      return { removed: await deleteEndedSessions(s.sql, s.config.dashboard.sessionIdleSeconds, s.config.dashboard.sessionMaxSeconds) };
    }
    return undefined;
  },
};
