import { unix } from '../lib/time.ts';
import type { EventRow } from './store.ts';

/** The event object of the API (spec 2.5); a webhook body is exactly this, serialised. */
export function presentEvent(row: Pick<EventRow, 'id' | 'livemode' | 'type' | 'api_version' | 'data' | 'created_at'>) {
  return {
    id: row.id,
    object: 'event' as const,
    livemode: row.livemode,
    type: row.type,
    api_version: row.api_version,
    data: row.data,
    created: unix(row.created_at),
  };
}
export type EventObject = ReturnType<typeof presentEvent>;
