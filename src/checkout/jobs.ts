import { within } from '../queue/bound.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';
import type { SessionRow } from './store.ts';

// What checkout enqueues: one delayed expiry job per OPEN session (DESIGN 6). The rules that expire
// a session are in expiry.ts; the worker is workers/session-expiry.ts.

/** Kept tiny on purpose: every OPEN session holds one delayed job in Redis until it ends. */
export interface ExpiryJobData {
  a: string; // account id
  l: boolean; // livemode
}

const queue = (s: Services) => s.queues.get(QUEUE_NAMES.sessionExpiry);

/** The delayed job of a session, due at its expires_at (jobId = session id). */
export function expiryJob(row: Pick<SessionRow, 'id' | 'account_id' | 'livemode' | 'expires_at'>) {
  const data: ExpiryJobData = { a: row.account_id, l: row.livemode };
  return {
    name: 'expire',
    data,
    // Only the id and the delay: with every stored value under 64 bytes Redis keeps the job hash
    // as a compact listpack (about a third of the memory). The queue's default retry and retention
    // options are dropped on purpose: the worker applies retention (sessionExpiryWorker.keep), and
    // a failed expiry is retried by the reconciler rather than by BullMQ.
    opts: {
      jobId: row.id,
      delay: Math.max(0, row.expires_at.getTime() - Date.now()),
      attempts: undefined,
      backoff: undefined,
      removeOnComplete: undefined,
      removeOnFail: undefined,
    },
  };
}

export async function scheduleExpiry(s: Services, row: SessionRow): Promise<void> {
  const job = expiryJob(row);
  // Bounded: the caller answers a request, and the reconciler expires a session whose job is missing.
  await within(queue(s).add(job.name, job.data, job.opts));
}

/** A session that ended another way no longer needs its job; a job already running finds nothing to do. */
export async function unscheduleExpiry(s: Services, id: string): Promise<void> {
  await queue(s).remove(id);
}
