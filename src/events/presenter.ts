import { z } from 'zod';
import { created, livemode, objectId, objectName } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { EVENT_TYPE_NAMES, type EventType } from './catalogue.ts';

/** The API version stamped on every event (spec 9). */
export const API_VERSION = '2026-11-01';

/** What an event carries: a resource as the API presents it. */
export interface ApiObject {
  id: string;
  object: string;
  livemode: boolean;
}

/**
 * The event object of the API (spec 2.5). `data.object` is any resource here: events/ knows no
 * business component; the OpenAPI document (src/openapi/) puts each type's resource in its place.
 */
export const EventObjectSchema = z.strictObject({
  id: objectId('evt', 'event'),
  object: objectName('event'),
  livemode: livemode(),
  type: z.enum(EVENT_TYPE_NAMES as [EventType, ...EventType[]]).meta({ description: 'What happened (see `GET /v1/event-types`).' }),
  api_version: z.string().meta({ description: 'The version of the objects in `data`, a date `YYYY-MM-DD`.', example: API_VERSION }),
  data: z
    .strictObject({
      object: z
        .strictObject({ id: z.string(), object: z.string(), livemode: z.boolean() })
        .meta({ description: 'The resource concerned, in full, as the API shows it when the event happened.' }),
    })
    .meta({ description: 'What the event is about.' }),
  created: created(),
});

/** The event object of the API (spec 2.5); a webhook body is exactly this, serialised. */
export type EventObject = z.infer<typeof EventObjectSchema>;

/** The stored fields an event object is made of: an events row (store.ts), or a delivery's read of it. */
export interface StoredEvent {
  id: string;
  livemode: boolean;
  /** Only insertEvents (store.ts) writes events, so only catalogue types are stored. */
  type: EventType;
  api_version: string;
  data: { object: ApiObject };
  created_at: Date;
}

export function presentEvent(row: StoredEvent): EventObject {
  return {
    id: row.id,
    object: 'event',
    livemode: row.livemode,
    type: row.type,
    api_version: row.api_version,
    data: row.data,
    created: unix(row.created_at),
  };
}

/**
 * `JSON.stringify(presentEvent(row))`, byte for byte, from the stored text of `data` (the column is
 * json, which keeps the text insertEvents wrote with JSON.stringify): a webhook body made without
 * parsing the resource and serialising it again (issue 28.5). The fields as presentEvent orders them.
 */
export function presentEventJson(row: Omit<StoredEvent, 'data'>, dataJson: string): string {
  return `{"id":${JSON.stringify(row.id)},"object":"event","livemode":${row.livemode},"type":${JSON.stringify(row.type)},"api_version":${JSON.stringify(row.api_version)},"data":${dataJson},"created":${unix(row.created_at)}}`;
}
