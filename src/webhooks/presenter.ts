import { unix } from '../lib/time.ts';
import type { AttemptRow, DeliveryRow } from './deliveries.ts';
import type { EndpointRow } from './store.ts';

const unixOrNull = (d: Date | null) => (d ? unix(d) : null);

/** The webhook_endpoint object (spec 2.4). The signing secret is added only by create and rotate. */
export function presentEndpoint(row: EndpointRow) {
  return {
    id: row.id,
    object: 'webhook_endpoint' as const,
    livemode: row.livemode,
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    is_active: row.is_active,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}

/** The one answer that shows the secret: right after create or rotate. */
export const presentEndpointWithSecret = (row: EndpointRow) => ({ ...presentEndpoint(row), signing_secret: row.secret });

export function presentAttempt(a: AttemptRow) {
  return {
    attempt: a.attempt,
    created: unix(a.started_at),
    duration_ms: a.duration_ms,
    status_code: a.status_code,
    error: a.error,
    response_body: a.response_body,
  };
}

/** A delivery of one event to one endpoint, with every attempt made so far. */
export function presentDelivery(row: DeliveryRow, attempts: readonly AttemptRow[] = []) {
  return {
    id: row.id,
    object: 'webhook_delivery' as const,
    livemode: row.livemode,
    event_id: row.event_id,
    endpoint_id: row.endpoint_id,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'PENDING' ? unixOrNull(row.next_attempt_at) : null,
    last_attempt_at: unixOrNull(row.last_attempt_at),
    attempts: attempts.map(presentAttempt),
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
