import { jobRun, runDelivery } from '../src/webhooks/deliver.ts';
import { startFirstAttempts } from '../src/webhooks/first-attempts.ts';
import type { DeliverJobData } from '../src/webhooks/jobs.ts';
import type { WorkerDefinition } from './types.ts';

/** Deliveries wait on the network, not the CPU: many run at once per process. */
const CONCURRENCY = 50;

/**
 * Deliveries: their first attempts in the lane (src/webhooks/lane.ts, no job each), run by the
 * background loop with as many at once as the queue; their retries as jobs of this queue. The
 * repair pass of both is `reconcileDeliveries` (src/webhooks/deliver.ts), run by reconcile.ts.
 */
export const webhookDeliveryWorker: WorkerDefinition<DeliverJobData> = {
  queue: 'webhook-delivery',
  concurrency: CONCURRENCY,
  background: (s) => startFirstAttempts(s, CONCURRENCY),
  process: (job, s, token) => runDelivery(s, jobRun(s, job, token)),
};

/**
 * The same handler on the deliveries that wait for their endpoint's throttle (src/webhooks/jobs.ts):
 * each job wakes at its slot, so this queue holds no backlog of its own to wait behind.
 */
export const webhookThrottledWorker: WorkerDefinition<DeliverJobData> = {
  queue: 'webhook-throttled',
  concurrency: CONCURRENCY,
  process: (job, s, token) => runDelivery(s, jobRun(s, job, token)),
};
