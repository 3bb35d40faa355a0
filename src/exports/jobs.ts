import type { JobsOptions, Queue } from 'bullmq';
import { within } from '../queue/bound.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';

// What exports enqueue: one "run" job per export run (jobId = the run's id). The worker is
// workers/exports.ts; the handler is run.ts.

export const RUN_JOB = 'run';

/** Attempts of one run, counted in its row (a job enqueued again by the reconciler keeps the count). */
export const EXPORT_MAX_ATTEMPTS = 3;

/** States in which a job will still run (or is running). */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

const exportsQueue = (s: Pick<Services, 'queues'>): Queue => s.queues.get(QUEUE_NAMES.exports);

export function runJobOptions(runId: string): JobsOptions {
  return {
    jobId: runId,
    attempts: EXPORT_MAX_ATTEMPTS,
    backoff: { type: 'exponential', delay: 5000 },
    // The row holds the outcome: a finished job need not stay in Redis.
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  };
}

/** Enqueues the job of a committed run, bounded: the caller is answering a request (the reconciler enqueues a lost one). */
export async function enqueueRun(s: Pick<Services, 'queues'>, runId: string): Promise<void> {
  await within(exportsQueue(s).add(RUN_JOB, {}, runJobOptions(runId)));
}

/**
 * Gives each run a job again unless it has a live one (Redis flushed, the after-commit enqueue
 * lost, a job failed by BullMQ's stall limit). `stillUnfinished` re-reads the rows after the job
 * states: a job completes only after its row is final. Returns the ids enqueued.
 */
export async function revive(s: Pick<Services, 'queues'>, ids: readonly string[], stillUnfinished: (ids: string[]) => Promise<string[]>): Promise<string[]> {
  const q = exportsQueue(s);
  const states = await Promise.all(ids.map((id) => q.getJobState(id)));
  const dead = await stillUnfinished(ids.filter((_, i) => !LIVE.has(states[i]!)));
  for (const id of dead) await q.remove(id); // a failed job keeps its id a day: it must go before the id can be reused
  if (dead.length) await q.addBulk(dead.map((id) => ({ name: RUN_JOB, data: {}, opts: runJobOptions(id) })));
  return dead;
}
