import { reconcileExpiries } from '../src/checkout/expiry.ts';
import { settleStuckPayments } from '../src/checkout/settle.ts';
import { registerLinkPayments } from '../src/payment-links/payment-hooks.ts';
import { reconcileCounters } from '../src/payment-links/counters.ts';
import type { Services } from '../src/services.ts';
import type { WorkerDefinition } from './types.ts';
import { webhookDeliveryReconciler } from './webhook-delivery.ts';

/**
 * A repair pass over Postgres, the source of truth: each one finds work that is due but has no
 * live job (Redis flushed, a worker killed) and enqueues it again. Jobs have deterministic ids,
 * so enqueueing what is already queued is a no-op.
 */
export interface Reconciler {
  name: string;
  run(s: Services): Promise<number>;
}

/** Every component with due work adds its reconciler here. */
export const RECONCILERS: Reconciler[] = [
  { name: 'payment-link-counters', run: (s) => reconcileCounters(s.sql) },
  webhookDeliveryReconciler,
  // Before expiry: a session whose attempt is settled as declined can then expire in the same pass.
  // The link hooks take part in a settled payment here as on the hosted page (a worker-only process
  // never builds the page router that registers them otherwise).
  {
    name: 'payments-in-flight',
    run: (s) => {
      registerLinkPayments();
      return settleStuckPayments(s);
    },
  },
  { name: 'checkout-session-expiry', run: reconcileExpiries },
];

export const reconcileWorker: WorkerDefinition = {
  queue: 'reconcile',
  concurrency: 1,
  schedules: (s) => [{ id: 'reconcile', everyMs: s.config.reconcileIntervalMs, name: 'reconcile' }],
  async process(_job, s) {
    const repaired: Record<string, number> = {};
    for (const r of RECONCILERS) repaired[r.name] = await r.run(s);
    return repaired;
  },
};
