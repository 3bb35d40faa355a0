import { deleteEndedSessions } from '../src/dashboard/store.ts';
import { deleteExpiredKeys } from '../src/idempotency/store.ts';
import { deleteEndedPortalSessions } from '../src/portal/store.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * Hourly housekeeping: idempotency keys are kept KEY_TTL (24 hours, src/idempotency/store.ts),
 * then removed; dashboard sessions past their limits and spent set-password links are removed, and
 * so are customer portal sessions past theirs and portal sign-in links a day after use or expiry.
 */
export const maintenanceWorker: WorkerDefinition = {
  queue: 'maintenance',
  concurrency: 1,
  schedules: () => [
    { id: 'idempotency-cleanup', everyMs: 3_600_000, name: 'idempotency-cleanup' },
    { id: 'dashboard-sessions-cleanup', everyMs: 3_600_000, name: 'dashboard-sessions-cleanup' },
    { id: 'portal-sessions-cleanup', everyMs: 3_600_000, name: 'portal-sessions-cleanup' },
  ],
  async process(job, s) {
    if (job.name === 'idempotency-cleanup') return { removed: await deleteExpiredKeys(s.sql) };
    if (job.name === 'dashboard-sessions-cleanup') {
      return { removed: await deleteEndedSessions(s.sql, s.config.dashboard.sessionIdleSeconds, s.config.dashboard.sessionMaxSeconds) };
    }
    if (job.name === 'portal-sessions-cleanup') {
      return { removed: await deleteEndedPortalSessions(s.sql, s.config.portal.sessionIdleSeconds, s.config.portal.sessionMaxSeconds) };
    }
    return undefined;
  },
};
