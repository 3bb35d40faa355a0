import { withTx } from '../db/tx.ts';
import { resourceMissing } from '../lib/errors.ts';
import type { PageParams } from '../lib/pagination.ts';
import type { Services } from '../services.ts';
import { attemptsOf, findDeliveries, listForEvent, subscribes, subscriptionsOf, type AttemptRow, type DeliveryRow } from '../webhooks/deliveries.ts';
import { createDeliveries } from '../webhooks/fanout.ts';
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
  return withTx(s, s.log, async (tx) => {
    const event = await findEvent(tx.sql, o, eventId);
    if (!event) throw resourceMissing('event', eventId);
    let targets: Array<{ id: string; is_active: boolean }>;
    if (endpointId !== undefined) {
      const endpoint = await findEndpoint(tx.sql, o, endpointId);
      if (!endpoint) throw resourceMissing('webhook_endpoint', endpointId, 'endpoint_id');
      targets = [endpoint];
    } else {
      const all = await subscriptionsOf(tx.sql, [o]);
      targets = all.filter((ep) => subscribes(ep, event.type));
    }
    const created = await createDeliveries(
      tx,
      targets.map((ep) => ({ accountId: o.accountId, livemode: o.livemode, eventId: event.id, endpointId: ep.id, active: ep.is_active })),
    );
    return findDeliveries(tx.sql, created.map((d) => d.id));
  });
}
