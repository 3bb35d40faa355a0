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
