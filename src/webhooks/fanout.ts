import type { Tx } from '../db/tx.ts';
import { insertDeliveries, subscribedEndpoints } from './deliveries.ts';
import { deliveryJobs } from './jobs.ts';

/**
 * Spec 6.1 fan-out, inside the transaction that records the event: one delivery per endpoint of the
 * same account and mode subscribed to the type (or to `*`). Jobs are enqueued once the transaction
 * has committed, so a worker never looks for a row that is not there yet; if that enqueue fails, the
 * rows are still PENDING and due, and the reconciler enqueues them.
 */
export async function fanOut(tx: Tx, accountId: string, livemode: boolean, eventId: string, type: string): Promise<void> {
  const endpoints = await subscribedEndpoints(tx.sql, accountId, livemode, type);
  if (endpoints.length === 0) return;
  const rows = await insertDeliveries(tx.sql, accountId, livemode, eventId, endpoints);
  const pending = rows.filter((r) => r.status === 'PENDING').map((r) => r.id);
  if (pending.length === 0) return;
  const jobs = deliveryJobs(tx.s);
  tx.afterCommit(() => jobs.add(pending));
}
