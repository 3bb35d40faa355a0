import type { JobsOptions, Queue } from 'bullmq';
import { within } from '../queue/bound.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';

// What email enqueues: one "send" job per email row, jobId = the email id. The worker is
// workers/email.ts; the handler is send.ts.

export const SEND_JOB = 'send';

/** States in which a job will still run (or is running): the email needs nothing more. */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** What queueing an email needs after commit: the queues, the retry settings, and the log for an enqueue that fails. */
export type SendJobDeps = Pick<Services, 'queues' | 'config' | 'log'>;

const emailQueue = (s: Pick<Services, 'queues'>): Queue => s.queues.get(QUEUE_NAMES.email);

/** EMAIL_MAX_ATTEMPTS attempts with BullMQ's exponential backoff from EMAIL_BACKOFF_BASE_MS. */
export function sendJobOptions(s: Pick<Services, 'config'>, emailId: string): JobsOptions {
  return {
    jobId: emailId,
    attempts: s.config.email.maxAttempts,
    backoff: { type: 'exponential', delay: s.config.email.backoffBaseMs },
    // The row holds the outcome and the last error: a finished job need not stay in Redis.
    removeOnComplete: true,
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}

/** Enqueues the send job of a committed email, bounded: the caller may be answering a request or recording a payment. */
export async function enqueueSend(s: Pick<Services, 'queues' | 'config'>, emailId: string): Promise<void> {
  await within(emailQueue(s).add(SEND_JOB, {}, sendJobOptions(s, emailId)));
}

/**
 * Gives each email a job again unless it has a live one (Redis flushed, the after-commit enqueue
 * lost, a job failed by BullMQ's stall limit). `stillPending` re-reads the rows after the job
 * states: a job completes only after its row is final. Returns the ids enqueued.
 */
export async function revive(s: Pick<Services, 'queues' | 'config'>, ids: readonly string[], stillPending: (ids: string[]) => Promise<string[]>): Promise<string[]> {
  const q = emailQueue(s);
  const states = await Promise.all(ids.map((id) => q.getJobState(id)));
  const dead = await stillPending(ids.filter((_, i) => !LIVE.has(states[i]!)));
  for (const id of dead) await q.remove(id); // a failed job keeps its id for a week: it must go before the id can be reused
  if (dead.length) await q.addBulk(dead.map((id) => ({ name: SEND_JOB, data: {}, opts: sendJobOptions(s, id) })));
  return dead;
}
