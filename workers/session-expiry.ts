import { expireIfDue, type ExpiryJobData } from '../src/checkout/expiry.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * The delayed job of every OPEN checkout session (jobId = session id), due at its expires_at.
 * The update is conditional, so a session paid or expired meanwhile is left alone.
 */
export const sessionExpiryWorker: WorkerDefinition<ExpiryJobData> = {
  queue: 'session-expiry',
  // Expiry is a short transaction on Postgres; many at once keep a burst of sessions on time.
  concurrency: 50,
  async process(job, s) {
    const id = job.id!;
    const outcome = await expireIfDue(s, { accountId: job.data.a, livemode: job.data.l }, id, s.log.child({ job: id }));
    // Fired before expires_at (clock skew between hosts): fail, and the retry comes back later.
    if (outcome === 'not_due') throw new Error(`session ${id} is not due yet`);
    return outcome;
  },
};
