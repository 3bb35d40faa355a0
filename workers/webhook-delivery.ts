import { deliveryJobs, type DeliverJobData } from '../src/webhooks/jobs.ts';
import { runDelivery } from '../src/webhooks/deliver.ts';
import { duePending, stillPending } from '../src/webhooks/deliveries.ts';
import type { Services } from '../src/services.ts';
import type { Reconciler } from './reconcile.ts';
import type { WorkerDefinition } from './types.ts';

/** Deliveries wait on the network, not the CPU: many run at once per process. */
const CONCURRENCY = 50;
const RECONCILE_BATCH = 500;

export const webhookDeliveryWorker: WorkerDefinition<DeliverJobData> = {
  queue: 'webhook-delivery',
  concurrency: CONCURRENCY,
  process: (job, s) => runDelivery(s, job),
};

/**
 * Every PENDING delivery that is due and has no live job gets one again (Redis flushed, a job
 * failed by BullMQ's stall limit, an after-commit enqueue that did not happen). A job found finished
 * is replaced only if its row is still PENDING after that finding.
 */
export const webhookDeliveryReconciler: Reconciler = {
  name: 'webhook-deliveries',
  async run(s: Services) {
    const jobs = deliveryJobs(s);
    let after = '';
    let revived = 0;
    for (;;) {
      const ids = await duePending(s.sql, after, RECONCILE_BATCH);
      if (ids.length === 0) break;
      revived += (await jobs.revive(ids, { stillPending: (dead) => stillPending(s.sql, dead) })).length;
      after = ids[ids.length - 1]!;
      if (ids.length < RECONCILE_BATCH) break;
    }
    return revived;
  },
};
