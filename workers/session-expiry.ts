import { expireDueBatch, expireIfDue } from '../src/checkout/expiry.ts';
import type { ExpiryJobData } from '../src/checkout/jobs.ts';
import { findSession } from '../src/checkout/store.ts';
import type { WorkerDefinition } from './types.ts';

/** How early a job may fire (clocks of hosts apart) and still be waited out in place. */
const MAX_EARLY_MS = 10_000;
/** Sessions due at the same time that one job expires together with its own. */
const BATCH = 500;

/**
 * The delayed job of every OPEN checkout session (jobId = session id), due at its expires_at.
 * Updates are conditional, so a session paid or expired meanwhile is left alone. A job that fails
 * is not retried by BullMQ: the reconciler expires the session (RECONCILE_GRACE_MS later).
 */
export const sessionExpiryWorker: WorkerDefinition<ExpiryJobData> = {
  queue: 'session-expiry',
  concurrency: 50,
  keep: { removeOnComplete: { count: 0 }, removeOnFail: { age: 24 * 3600, count: 10_000 } },
  async process(job, s) {
    const id = job.id!;
    const owner = { accountId: job.data.a, livemode: job.data.l };
    const log = s.log.child({ job: id });
    const row = await findSession(s.sql, owner, id);
    if (!row || row.status !== 'OPEN') return 'ended'; // paid, expired, or expired by another job's batch
    const early = row.expires_at.getTime() - Date.now();
    if (early > MAX_EARLY_MS) throw new Error(`session ${id} is not due for ${early} ms; the reconciler will expire it`);
    if (early > 0) await new Promise((r) => setTimeout(r, early + 50)); // fired early: another host's clock
    const batch = await expireDueBatch(s, log, new Date(), BATCH);
    if (batch.some((r) => r.id === id)) return 'expired';
    // Not in the batch: a payment holds it (wait for its outcome), or the batch filled up first.
    return expireIfDue(s, owner, id, log);
  },
};
