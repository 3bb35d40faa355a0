import { withTx } from '../db/tx.ts';
import { resourceMissing } from '../lib/errors.ts';
import type { PageParams } from '../lib/pagination.ts';
import type { Services } from '../services.ts';
import { attemptsOf, findDeliveries, insertDeliveries, listForEvent, subscribedEndpoints, type AttemptRow, type DeliveryRow } from '../webhooks/deliveries.ts';
import { deliveryJobs } from '../webhooks/jobs.ts';
import { findEndpoint } from '../webhooks/store.ts';
import { findEvent, type Owner } from './store.ts';

export interface DeliveriesPage {
  rows: DeliveryRow[];
  attempts: Map<string, AttemptRow[]>;
}

/** An event's deliveries, each with its attempts. */
export async function eventDeliveries(s: Services, o: Owner, eventId: string, p: PageParams): Promise<DeliveriesPage> {
  if (!(await findEvent(s.sql, o, eventId))) throw resourceMissing('event', eventId);
  const rows = await listForEvent(s.sql, o, eventId, p);
  return { rows, attempts: await attemptsOf(s.sql, rows.map((r) => r.id)) };
}

/**
 * Sends a past event again as new deliveries (new ids, so new jobs), attempt 1 at once: to one
 * endpoint of the same account and mode when `endpointId` is given (subscribed or not, the merchant
 * asked for it), else to every endpoint subscribed to the event's type now. An inactive endpoint
 * gets a PAUSED delivery, sent when it is re-enabled.
 */
export async function resendEvent(s: Services, o: Owner, eventId: string, endpointId: string | undefined): Promise<DeliveryRow[]> {
  const jobs = deliveryJobs(s);
  return withTx(s, s.log, async (tx) => {
    const event = await findEvent(tx.sql, o, eventId);
    if (!event) throw resourceMissing('event', eventId);
    let targets: Array<{ id: string; is_active: boolean }>;
    if (endpointId !== undefined) {
      const endpoint = await findEndpoint(tx.sql, o, endpointId);
      if (!endpoint) throw resourceMissing('webhook_endpoint', endpointId, 'endpoint_id');
      targets = [endpoint];
    } else {
      targets = await subscribedEndpoints(tx.sql, o.accountId, o.livemode, event.type);
    }
    const created = await insertDeliveries(tx.sql, o.accountId, o.livemode, event.id, targets);
    const pending = created.filter((d) => d.status === 'PENDING').map((d) => d.id);
    tx.afterCommit(() => jobs.add(pending));
    return findDeliveries(tx.sql, created.map((d) => d.id));
  });
}
