import { within } from '../queue/bound.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';
import type { RefundRow } from './store.ts';

// What refunds enqueue: one delayed "settle" job per refund the processor answered pending
// (jobId = refund id). The worker is workers/refunds.ts; the handler is settle.ts.

/**
 * When the job first asks the processor again: just after the simulator settles a refund
 * (SIMULATOR_REFUND_SETTLE_MS), so test-mode refunds end within about a second.
 */
export const REFUND_SETTLE_DELAY_MS = 600;

export async function scheduleRefundSettle(s: Services, row: Pick<RefundRow, 'id'>): Promise<void> {
  // Bounded: the caller may be answering a request, and the sweeper settles a refund whose job is missing.
  await within(
    s.queues.get(QUEUE_NAMES.refunds).add('settle', {}, {
      jobId: row.id,
      delay: REFUND_SETTLE_DELAY_MS,
      // "Still pending" is thrown and retried every second for a while; after that the sweeper asks.
      attempts: 10,
      backoff: { type: 'fixed', delay: 1000 },
    }),
  );
}
