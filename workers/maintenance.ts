import { deleteEndedSteps } from '../src/dashboard/security/store.ts';
import { deleteEndedSessions } from '../src/dashboard/store.ts';
import { deleteEndedPortalSessions } from '../src/portal/store.ts';
import { runRetention } from '../src/retention/service.ts';
import type { WorkerDefinition } from './types.ts';

/** The hourly job of releases before issue 23: idempotency keys now go with their partitions (retention). */
const RETIRED_SCHEDULES = ['idempotency-cleanup'];

/**
 * Hourly housekeeping: `retention` makes the partitions of the bounded tables ahead and drops the
 * ones past retention (src/retention/: events, deliveries and attempts, emails, processor events,
 * idempotency keys); dashboard sessions past their limits and spent set-password links are removed,
 * and so are customer portal sessions past theirs and portal sign-in links a day after use or expiry.
 */
export const maintenanceWorker: WorkerDefinition = {
  queue: 'maintenance',
  concurrency: 1,
  schedules: () => [
    { id: 'retention', everyMs: 3_600_000, name: 'retention' },
    { id: 'dashboard-sessions-cleanup', everyMs: 3_600_000, name: 'dashboard-sessions-cleanup' },
    { id: 'portal-sessions-cleanup', everyMs: 3_600_000, name: 'portal-sessions-cleanup' },
  ],
  async process(job, s) {
    if (job.name === 'retention') return runRetention(s, new Date());
    if (job.name === 'dashboard-sessions-cleanup') {
      const sessions = await deleteEndedSessions(s.sql, s.config.dashboard.sessionIdleSeconds, s.config.dashboard.sessionMaxSeconds);
      // Sign-in steps and WebAuthn challenges past their few minutes (issue 25).
      return { removed: sessions + (await deleteEndedSteps(s.sql)) };
    }
    if (job.name === 'portal-sessions-cleanup') {
      return { removed: await deleteEndedPortalSessions(s.sql, s.config.portal.sessionIdleSeconds, s.config.portal.sessionMaxSeconds) };
    }
    // A schedule left in Redis by an earlier release: removed, so that it stops making jobs.
    if (RETIRED_SCHEDULES.includes(job.name)) await s.queues.get('maintenance').removeJobScheduler(job.name);
    return undefined;
  },
};
