import type { Queues } from '../queue/queues.ts';
import type { ViewRecord } from './counters.ts';

/**
 * The jobs of payment links, as in every component's jobs.ts: the job names, data and options
 * they go on the queue with. The link-counters worker (workers/link-counters.ts) applies them.
 */

/** Enqueues the counter job of one successful link payment; its id makes a second enqueue a no-op. */
export async function enqueuePaymentCount(queues: Queues, paymentId: string): Promise<void> {
  await queues.get('link-counters').add('payment', { paymentId }, { jobId: paymentId });
}

/** A batch exists only in Redis until it is applied: its job outlasts a Postgres outage of about half an hour. */
const VIEW_JOB_ATTEMPTS = 12;

/** Enqueues one batch of page views; its id (the first record's) makes a second enqueue of the same batch a no-op. */
export async function enqueueViews(queues: Queues, batch: readonly ViewRecord[]): Promise<void> {
  await queues.get('link-counters').add('views', { views: batch }, { jobId: batch[0]!.id, removeOnComplete: true, attempts: VIEW_JOB_ATTEMPTS });
}
