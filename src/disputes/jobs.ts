import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';
import type { DisputeRow } from './store.ts';

// What disputes enqueue (the worker is workers/disputes.ts). Both jobs only make a change come
// sooner: the reconcile pass (reconcileDisputes) does the same work from Postgres every
// RECONCILE_INTERVAL_MS, so a lost job (Redis flushed, enqueue failed) delays, never loses, it.

/**
 * After a payment succeeds: ask the processor for new disputes. Later than the simulator reports
 * a dispute of card 0259 (SIMULATOR_DISPUTE_AFTER_MS, 1 s), so in test mode it appears within ~2 s.
 */
export const SYNC_AFTER_PAYMENT_MS = 2000;
/** After evidence is submitted: ask for the decision, later than the simulator makes it (1 s). */
export const DECIDE_AFTER_SUBMIT_MS = 2000;

export interface DisputeJobData {
  a?: string; // account id
  l?: boolean; // livemode
  id?: string; // dispute id (decide)
}

const queue = (s: Services) => s.queues.get(QUEUE_NAMES.disputes);

export async function enqueueSyncAfterPayment(s: Services, paymentId: string): Promise<void> {
  const data: DisputeJobData = {};
  await queue(s).add('sync', data, { jobId: `sync-${paymentId}`, delay: SYNC_AFTER_PAYMENT_MS });
}

export async function enqueueDecisionCheck(s: Services, row: DisputeRow): Promise<void> {
  const data: DisputeJobData = { a: row.account_id, l: row.livemode, id: row.id };
  await queue(s).add('decide', data, { jobId: `decide-${row.id}`, delay: DECIDE_AFTER_SUBMIT_MS });
}
