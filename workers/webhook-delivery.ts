import { runDelivery } from '../src/webhooks/deliver.ts';
import type { DeliverJobData } from '../src/webhooks/jobs.ts';
import type { WorkerDefinition } from './types.ts';

/** Deliveries wait on the network, not the CPU: many run at once per process. */
const CONCURRENCY = 50;

/** One job per webhook delivery; its repair pass is `reconcileDeliveries` (src/webhooks/deliver.ts), run by reconcile.ts. */
export const webhookDeliveryWorker: WorkerDefinition<DeliverJobData> = {
  queue: 'webhook-delivery',
  concurrency: CONCURRENCY,
  process: (job, s, token) => runDelivery(s, job, token),
};

/**
 * The same handler on the deliveries that wait for their endpoint's throttle (src/webhooks/jobs.ts):
 * each job wakes at its slot, so this queue holds no backlog of its own to wait behind.
 */
export const webhookThrottledWorker: WorkerDefinition<DeliverJobData> = {
  queue: 'webhook-throttled',
  concurrency: CONCURRENCY,
  process: (job, s, token) => runDelivery(s, job, token),
};
