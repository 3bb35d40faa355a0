import type { Tx } from '../db/tx.ts';
import type { EventType } from '../events/catalogue.ts';
import { insertDeliveryRows, subscribes, subscriptionsOf, type DeliveryStatus, type NewDelivery } from './deliveries.ts';
import { deliveryJobs, type DeliveryJobDeps, type ThrottleRoute } from './jobs.ts';

export interface RecordedEvent {
  accountId: string;
  livemode: boolean;
  eventId: string;
  type: EventType;
  /** The event's data.object.id: what an ordered endpoint orders its deliveries by (ordering.ts). */
  objectId: string;
}

/**
 * Spec 6.1 fan-out, inside the transaction that records the events: one delivery per endpoint of
 * the same account and mode subscribed to the type (or to `*`). One read of the endpoints and one
 * insert serve any number of events. Jobs are enqueued once the transaction has committed, so a
 * worker never looks for a row that is not there yet; if that enqueue fails, the rows are still
 * PENDING and due, and the reconciler enqueues them. `exceptEndpoint` gets no delivery (an event
 * about that endpoint itself: webhook_endpoint.disabled goes to the account's other endpoints).
 */
export async function fanOut(tx: Tx, s: DeliveryJobDeps, events: readonly RecordedEvent[], exceptEndpoint?: string): Promise<void> {
  const endpoints = (await subscriptionsOf(tx.sql, events)).filter((ep) => ep.id !== exceptEndpoint);
  if (endpoints.length === 0) return;
  const deliveries: NewDelivery[] = [];
  for (const e of events) {
    for (const ep of endpoints) {
      const mine = ep.account_id === e.accountId && ep.livemode === e.livemode;
      if (mine && subscribes(ep, e.type)) {
        deliveries.push({ accountId: e.accountId, livemode: e.livemode, eventId: e.eventId, endpointId: ep.id, active: ep.is_active, objectId: ep.ordered ? e.objectId : null, rateLimit: ep.rate_limit });
      }
    }
  }
  await createDeliveries(tx, s, deliveries);
}

/** The delivery rows, and after commit one job for each that is due now (the PAUSED ones wait). */
export async function createDeliveries(tx: Tx, s: DeliveryJobDeps, deliveries: readonly NewDelivery[]): Promise<Array<{ id: string; status: DeliveryStatus }>> {
  const rows = await insertDeliveryRows(tx.sql, deliveries);
  const pending = rows.filter((r) => r.status === 'PENDING');
  if (pending.length > 0) {
    const jobs = deliveryJobs(s);
    tx.afterCommit(() => jobs.add(pending.map((r) => r.id), throttleRoutes(pending, deliveries)));
  }
  return rows;
}

/** The deliveries among `rows` whose endpoint is throttled, with its rate (jobs.ts routes them). */
export function throttleRoutes(rows: ReadonlyArray<{ id: string; endpoint_id: string }>, deliveries: ReadonlyArray<{ endpointId: string; rateLimit?: number | null }>): Map<string, ThrottleRoute> {
  const rates = new Map(deliveries.filter((d) => d.rateLimit != null).map((d) => [d.endpointId, d.rateLimit!]));
  const routes = new Map<string, ThrottleRoute>();
  if (rates.size === 0) return routes;
  for (const r of rows) {
    const rate = rates.get(r.endpoint_id);
    if (rate !== undefined) routes.set(r.id, { endpointId: r.endpoint_id, rate });
  }
  return routes;
}
