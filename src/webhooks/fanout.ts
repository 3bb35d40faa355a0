import type { Tx } from '../db/tx.ts';
import type { EventType } from '../events/catalogue.ts';
import { insertDeliveryRows, subscribes, subscriptionsOf, type DeliveryStatus, type NewDelivery } from './deliveries.ts';
import { deliveryJobs } from './jobs.ts';

export interface RecordedEvent {
  accountId: string;
  livemode: boolean;
  eventId: string;
  type: EventType;
}

/**
 * Spec 6.1 fan-out, inside the transaction that records the events: one delivery per endpoint of
 * the same account and mode subscribed to the type (or to `*`). One read of the endpoints and one
 * insert serve any number of events. Jobs are enqueued once the transaction has committed, so a
 * worker never looks for a row that is not there yet; if that enqueue fails, the rows are still
 * PENDING and due, and the reconciler enqueues them.
 */
export async function fanOut(tx: Tx, events: readonly RecordedEvent[]): Promise<void> {
  const endpoints = await subscriptionsOf(tx.sql, events);
  if (endpoints.length === 0) return;
  const deliveries: NewDelivery[] = [];
  for (const e of events) {
    for (const ep of endpoints) {
      const mine = ep.account_id === e.accountId && ep.livemode === e.livemode;
      if (mine && subscribes(ep, e.type)) {
        deliveries.push({ accountId: e.accountId, livemode: e.livemode, eventId: e.eventId, endpointId: ep.id, active: ep.is_active });
      }
    }
  }
  await createDeliveries(tx, deliveries);
}

/** The delivery rows, and after commit one job for each that is due now (the PAUSED ones wait). */
export async function createDeliveries(tx: Tx, deliveries: readonly NewDelivery[]): Promise<Array<{ id: string; status: DeliveryStatus }>> {
  const rows = await insertDeliveryRows(tx.sql, deliveries);
  const pending = rows.filter((r) => r.status === 'PENDING').map((r) => r.id);
  if (pending.length > 0) {
    const jobs = deliveryJobs(tx.s);
    tx.afterCommit(() => jobs.add(pending));
  }
  return rows;
}
