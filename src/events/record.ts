import type { Tx } from '../db/tx.ts';
import { newId } from '../lib/ids.ts';
import { nowUnix } from '../lib/time.ts';
import { fanOut } from '../webhooks/fanout.ts';

/** The API version stamped on every event (spec 9). */
export const API_VERSION = '2026-11-01';

export interface ApiObject {
  id: string;
  object: string;
  livemode: boolean;
}

export interface Event {
  id: string;
  object: 'event';
  livemode: boolean;
  type: string;
  api_version: string;
  data: { object: ApiObject };
  created: number;
}

export interface EventInput {
  accountId: string;
  type: string;
  /** The resource as the API presents it. */
  object: ApiObject;
}

/**
 * Records events in the caller's transaction (transactional outbox, DESIGN 1): an event exists
 * exactly when the state change that caused it does. The same transaction creates the events'
 * webhook deliveries; their jobs are enqueued after commit. Any number of events costs one insert
 * and one fan-out, so a batch (a burst of expiries) is as cheap per event as it can be.
 */
export async function recordEvents(tx: Tx, inputs: readonly EventInput[]): Promise<Event[]> {
  if (inputs.length === 0) return [];
  const created = nowUnix();
  const events: Event[] = inputs.map((i) => ({
    id: newId('evt'),
    object: 'event',
    livemode: i.object.livemode,
    type: i.type,
    api_version: API_VERSION,
    data: { object: i.object },
    created,
  }));
  // json, not jsonb: the column keeps the text as written, so fields stay in the presenter's order.
  await tx.sql`
    insert into events (id, account_id, livemode, type, api_version, data, created_at)
    select e.id, e.account_id, e.livemode, e.type, ${API_VERSION}, e.data::json, to_timestamp(${created})
    from unnest(${events.map((e) => e.id)}::text[], ${inputs.map((i) => i.accountId)}::text[],
                ${events.map((e) => String(e.livemode))}::text[]::boolean[], ${events.map((e) => e.type)}::text[],
                ${events.map((e) => JSON.stringify(e.data))}::text[]) as e (id, account_id, livemode, type, data)`;
  await fanOut(tx, events.map((e, i) => ({ accountId: inputs[i]!.accountId, livemode: e.livemode, eventId: e.id, type: e.type })));
  return events;
}

/** One event: `recordEvents` of one. */
export async function recordEvent(tx: Tx, accountId: string, type: string, object: ApiObject): Promise<Event> {
  const [event] = await recordEvents(tx, [{ accountId, type, object }]);
  return event!;
}
