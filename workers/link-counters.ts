import { UnrecoverableError } from 'bullmq';
import { applyPayment, applyViews, type ViewRecord } from '../src/payment-links/counters.ts';
import type { WorkerDefinition } from './types.ts';

export type LinkCounterJob = { views: ViewRecord[] } | { paymentId: string };

/**
 * Applies the counters of payment links: `views` jobs carry a batch of page loads, one record per
 * link and source (job id: the first record's id), `payment` jobs one successful payment (job id:
 * the payment id). Both are idempotent in Postgres, so a retried or duplicated job never counts twice.
 */
export const linkCountersWorker: WorkerDefinition<LinkCounterJob> = {
  queue: 'link-counters',
  concurrency: 4,
  async process(job, s) {
    const data = job.data;
    if (job.name === 'views' && 'views' in data) return { added: await applyViews(s.sql, data.views) };
    if (job.name === 'payment' && 'paymentId' in data) return { counted: await applyPayment(s.sql, data.paymentId) };
    throw new UnrecoverableError(`unknown link-counters job ${job.name}`);
  },
};
