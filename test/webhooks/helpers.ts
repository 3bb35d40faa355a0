import { withTx } from '../../src/db/tx.ts';
import type { EventType } from '../../src/events/catalogue.ts';
import type { ApiObject } from '../../src/events/presenter.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import type { TestServer } from '../helpers/server.ts';

/** Records an event the way a component does: recordEvent inside withTx (fan-out included). */
export async function emit(t: TestServer, accountId: string, livemode: boolean, type: EventType, object?: ApiObject) {
  const obj = object ?? { id: 'cus_00000000000000000000000000', object: 'customer', livemode, email: 'a@example.com' };
  return withTx(t.s, t.s.log, (tx) => recordEvent(tx, accountId, type, obj as ApiObject));
}

export async function createEndpoint(t: TestServer, key: string, body: Record<string, unknown>) {
  const res = await t.request('POST', '/v1/webhook-endpoints', { key, body: { enabled_events: ['*'], ...body } });
  if (res.status !== 200) throw new Error(`endpoint create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; signing_secret: string; url: string; livemode: boolean };
}

export async function deliveryRows(t: TestServer, eventId: string) {
  return t.sql<{ id: string; endpoint_id: string; status: string; attempt_count: number }[]>`
    select id, endpoint_id, status, attempt_count from webhook_deliveries where event_id = ${eventId} order by id`;
}
