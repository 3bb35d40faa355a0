import type { JobsOptions, Queue } from 'bullmq';
import type { Services } from '../services.ts';
import { MAX_ATTEMPTS } from './deliveries.ts';

export const DELIVER_JOB = 'deliver';
export interface DeliverJobData {
  deliveryId: string;
}

/** States in which a job will still run (or is running): the delivery needs nothing more. */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * The BullMQ side of deliveries: one job per delivery, jobId = delivery id, 7 attempts with the
 * built-in exponential backoff (DESIGN 5). A job id can be reused only once its old job is gone,
 * so bringing a delivery back (re-enable, reconcile) removes a finished job first.
 */
export class DeliveryJobs {
  readonly queue: Queue;
  readonly backoffBaseMs: number;

  constructor(queue: Queue, backoffBaseMs: number) {
    this.queue = queue;
    this.backoffBaseMs = backoffBaseMs;
  }

  options(id: string): JobsOptions {
    return {
      jobId: id,
      attempts: MAX_ATTEMPTS,
      backoff: { type: 'exponential', delay: this.backoffBaseMs },
      // The delivery row and its attempts are the history; a completed job need not stay in Redis.
      removeOnComplete: true,
      // Failed jobs stay a week, to be inspected and retried from Bull Board.
      removeOnFail: { age: 7 * 24 * 3600 },
    };
  }

  /** The delay BullMQ applies after the `attemptsMade`-th failure of a job. */
  retryDelayMs(attemptsMade: number): number {
    return this.backoffBaseMs * 2 ** (attemptsMade - 1);
  }

  /** Jobs for new deliveries: their ids are fresh, so a plain add. Attempt 1 starts at once. */
  async add(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.queue.addBulk(ids.map((id) => ({ name: DELIVER_JOB, data: { deliveryId: id }, opts: this.options(id) })));
  }

  /**
   * Makes each delivery run now unless its job is live: a finished or missing job is replaced.
   * With `replaceDelayed`, a job waiting for a later retry is replaced too (resume: send now).
   * Returns the ids enqueued.
   */
  async revive(ids: readonly string[], opts: { replaceDelayed?: boolean; stillPending?: (ids: string[]) => Promise<string[]> } = {}): Promise<string[]> {
    const states = await Promise.all(ids.map((id) => this.queue.getJobState(id)));
    let dead = ids.filter((_, i) => !LIVE.has(states[i]!) || (opts.replaceDelayed && states[i] === 'delayed'));
    // A job finishes only after its row is final; re-reading the rows after the job states closes the
    // race in which a delivery read as PENDING has meanwhile succeeded and its job completed.
    if (opts.stillPending) dead = await opts.stillPending(dead);
    for (const id of dead) await this.queue.remove(id); // 0 when the job is locked by a worker: the add is then a no-op
    await this.add(dead);
    return dead;
  }

  /** Best effort: a job running right now cannot be removed, and finds its delivery CANCELLED or PAUSED. */
  async remove(ids: readonly string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.queue.remove(id)));
  }
}

/** The delivery queue of a running service. */
export function deliveryJobs(s: Pick<Services, 'queues' | 'config'>): DeliveryJobs {
  return new DeliveryJobs(s.queues.get('webhook-delivery'), s.config.webhookBackoffBaseMs);
}
