import { settleRefundJob } from '../src/refunds/settle.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * The settle job of every refund the processor answered pending (jobId = refund id): asks the
 * processor again and records the outcome (src/refunds/settle.ts). Idempotent: a refund no longer
 * PENDING is left alone.
 */
export const refundsWorker: WorkerDefinition = {
  queue: 'refunds',
  concurrency: 20,
  async process(job, s) {
    return settleRefundJob(s, job.id!);
  },
};
