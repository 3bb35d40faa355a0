import { UnrecoverableError } from 'bullmq';
import type { DisputeJobData } from '../src/disputes/jobs.ts';
import { checkDecision, syncNewDisputes } from '../src/disputes/service.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * `sync` (after a payment succeeded: new disputes from the processor) and `decide` (after evidence
 * was submitted: the decision). Both idempotent; their repair pass is `reconcileDisputes`
 * (src/disputes/service.ts), run by reconcile.ts, which does the same from Postgres.
 */
export const disputesWorker: WorkerDefinition<DisputeJobData> = {
  queue: 'disputes',
  concurrency: 2,
  async process(job, s) {
    const log = s.log.child({ job: job.id });
    if (job.name === 'sync') return { created: await syncNewDisputes(s, log) };
    const { a, l, id } = job.data;
    if (job.name === 'decide' && a && l !== undefined && id) return { status: await checkDecision(s, { accountId: a, livemode: l }, id, log) };
    throw new UnrecoverableError(`unknown disputes job ${job.name}`);
  },
};
