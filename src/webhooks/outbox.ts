import type { Tx } from '../db/tx.ts';
import type { EventType } from '../events/catalogue.ts';
import type { ApiObject, EventObject } from '../events/presenter.ts';
import { insertEvents, type EventInput } from '../events/store.ts';
import { fanOut } from './fanout.ts';
import type { DeliveryJobDeps } from './jobs.ts';

/**
 * The outbox writer (DESIGN 1): records events in the caller's transaction, so an event exists
 * exactly when the state change that caused it does, and creates their webhook deliveries in the
 * same transaction; the delivery jobs are enqueued after commit. Any number of events costs one
 * insert and one fan-out, so a batch (a burst of expiries) is as cheap per event as it can be.
 * It lives here, not in events/, so that events depend on no component and webhooks on events.
 * `s` is what the after-commit enqueue needs (any Services will do).
 */
export async function recordEvents(tx: Tx, s: DeliveryJobDeps, inputs: readonly EventInput[], exceptEndpoint?: string): Promise<EventObject[]> {
  const events = await insertEvents(tx.sql, inputs);
  await fanOut(tx, s, events.map((e, i) => ({ accountId: inputs[i]!.accountId, livemode: e.livemode, eventId: e.id, type: e.type, objectId: e.data.object.id })), exceptEndpoint);
  return events;
}

/** One event: `recordEvents` of one (`exceptEndpoint`: an endpoint that must not receive it, see fanOut). */
export async function recordEvent(tx: Tx, s: DeliveryJobDeps, accountId: string, type: EventType, object: ApiObject, exceptEndpoint?: string): Promise<EventObject> {
  const [event] = await recordEvents(tx, s, [{ accountId, type, object }], exceptEndpoint);
  return event!;
}
