import type { Tx } from '../db/tx.ts';
import { newId } from '../lib/ids.ts';
import { nowUnix } from '../lib/time.ts';
import { fanOut } from '../webhooks/fanout.ts';

/** The API version stamped on every event (spec 9). */
export const API_VERSION = '2026-11-01';

// json, not jsonb: the column keeps the text as written, so fields stay in the presenter's order.
const JSON_OID = 114;

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

/**
 * Records an event in the caller's transaction (transactional outbox, DESIGN 1): the event exists
 * exactly when the state change that caused it does. `object` is the resource as the API presents it.
 * The same transaction creates the event's webhook deliveries; their jobs are enqueued after commit.
 */
export async function recordEvent(tx: Tx, accountId: string, type: string, object: ApiObject): Promise<Event> {
  const event: Event = {
    id: newId('evt'),
    object: 'event',
    livemode: object.livemode,
    type,
    api_version: API_VERSION,
    data: { object },
    created: nowUnix(),
  };
  await tx.sql`
    insert into events (id, account_id, livemode, type, api_version, data, created_at)
    values (${event.id}, ${accountId}, ${event.livemode}, ${type}, ${API_VERSION},
            ${tx.sql.typed(event.data as never, JSON_OID)}, to_timestamp(${event.created}))`;
  await fanOut(tx, accountId, event.livemode, event.id, type);
  return event;
}
