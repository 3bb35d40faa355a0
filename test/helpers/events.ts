import { withTx } from '../../src/db/tx.ts';
import type { EventType } from '../../src/events/catalogue.ts';
import type { ApiObject } from '../../src/events/presenter.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import type { TestServer } from './server.ts';

/** The events whose data.object is `objectId`, oldest first: [type, the object as recorded]. */
export async function eventObjects(t: TestServer, objectId: string): Promise<Array<{ type: string; object: any }>> {
  const rows = await t.sql<{ type: string; data: unknown }[]>`
    select type, data from events where position(${objectId} in data::text) > 0 order by id`;
  return rows
    .map((r) => ({ type: r.type, data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { object: any } }))
    .filter((r) => r.data.object?.id === objectId)
    .map((r) => ({ type: r.type, object: r.data.object }));
}

/** The types of the events about `objectId`, oldest first. */
export async function eventsFor(t: TestServer, objectId: string): Promise<string[]> {
  return (await eventObjects(t, objectId)).map((e) => e.type);
}

/** Records an event the way a component does: recordEvent inside withTx (fan-out included). */
export async function emit(t: TestServer, accountId: string, livemode: boolean, type: EventType, object?: ApiObject) {
  const obj = object ?? { id: 'cus_00000000000000000000000000', object: 'customer', livemode, email: 'a@example.com' };
  return withTx(t.s, t.s.log, (tx) => recordEvent(tx, t.s, accountId, type, obj as ApiObject));
}
