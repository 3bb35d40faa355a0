import { startExpirySweeper } from '../src/checkout/jobs.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * Checkout session expiry (DESIGN 6, issue 28): the sweeper of src/checkout/jobs.ts, run in every
 * worker process, expires OPEN sessions at their expires_at from Postgres; sessions have no job.
 * The BullMQ worker of the `session-expiry` queue only drains the per-session delayed jobs that a
 * version before issue 28 left in Redis: each one ends at once (the sweeper expires its session),
 * so an upgrade neither loses an expiry nor leaves jobs behind. It can go once no such job is left.
 */
export const sessionExpiryWorker: WorkerDefinition = {
  queue: 'session-expiry',
  concurrency: 50,
  keep: { removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
  background: (s) => startExpirySweeper(s),
  async process() {
    return 'swept';
  },
};
