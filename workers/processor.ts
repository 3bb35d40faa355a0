import { UnrecoverableError } from 'bullmq';
import { JOB_CREATE_CUSTOMER, syncProcessorCustomer, type ProcessorCustomerJob } from '../src/processor/customers.ts';
import type { WorkerDefinition } from './types.ts';

/** Calls to the card processor that need not happen inside a request (processor customers). */
export const processorWorker: WorkerDefinition<ProcessorCustomerJob> = {
  queue: 'processor',
  concurrency: 10,
  async process(job, s) {
    if (job.name !== JOB_CREATE_CUSTOMER) throw new UnrecoverableError(`unknown job ${job.name}`);
    const customerId = job.id!.replace(/^pcus-/, '');
    return syncProcessorCustomer(s, { accountId: job.data.a, livemode: job.data.l }, customerId);
  },
};
