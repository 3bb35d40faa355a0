import type { TestServer } from '../helpers/server.ts';

export { emit } from '../helpers/events.ts';
export { createEndpoint } from '../helpers/factories.ts';

export async function deliveryRows(t: TestServer, eventId: string) {
  return t.sql<{ id: string; endpoint_id: string; status: string; attempt_count: number }[]>`
    select id, endpoint_id, status, attempt_count from webhook_deliveries where event_id = ${eventId} order by id`;
}
