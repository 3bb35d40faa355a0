import { unix } from '../lib/time.ts';
import type { EventType } from './catalogue.ts';

/** The API version stamped on every event (spec 9). */
export const API_VERSION = '2026-11-01';

/** What an event carries: a resource as the API presents it. */
export interface ApiObject {
  id: string;
  object: string;
  livemode: boolean;
}

/** The event object of the API (spec 2.5); a webhook body is exactly this, serialised. */
export interface EventObject {
  id: string;
  object: 'event';
  livemode: boolean;
  type: EventType;
  api_version: string;
  data: { object: ApiObject };
  created: number;
}

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
