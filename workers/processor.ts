import { SWEEP_EVERY_MS, syncProcessorCustomers } from '../src/processor/customers.ts';
import type { WorkerDefinition } from './types.ts';

/** Calls to the card processor that need not happen inside a request (processor customers). */
export const processorWorker: WorkerDefinition = {
  queue: 'processor',
  concurrency: 1,
  schedules: () => [{ id: 'processor-customers', everyMs: SWEEP_EVERY_MS, name: 'processor-customers' }],
  keep: { removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } },
  async process(_job, s) {
    let filled = 0;
    // Drain a backlog (a bulk import) in this run rather than 500 a second.
    for (let n = await syncProcessorCustomers(s); n > 0; n = await syncProcessorCustomers(s)) filled += n;
    return { filled };
  },
};
