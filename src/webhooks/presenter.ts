import { z } from 'zod';
import { EVENT_TYPE_NAMES, type EventType } from '../events/catalogue.ts';
import { created, livemode, nullableUnixTime, objectId, objectName, unixTime, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { DELIVERY_STATUSES } from './schema.ts';
import { USER_AGENT } from './sender.ts';
import { ROTATION_OVERLAP_MS } from './signing.ts';
import type { AttemptRow, DeliveryRow } from './deliveries.ts';
import type { EndpointRow } from './store.ts';

const unixOrNull = (d: Date | null) => (d ? unix(d) : null);

/** What `enabled_events` holds: event types, or `*` alone. */
const ENABLED_EVENTS: readonly (EventType | '*')[] = [...EVENT_TYPE_NAMES, '*'];
const enabledEvent = z.enum(ENABLED_EVENTS as [EventType | '*', ...(EventType | '*')[]]);

const endpointShape = {
  id: objectId('we', 'webhook endpoint'),
  object: objectName('webhook_endpoint'),
  livemode: livemode(),
  url: z.string().meta({ description: 'The HTTPS URL the service POSTs events to.', example: 'https://shop.example.com/webhooks' }),
  description: z.string().nullable().meta({ description: 'Internal label.' }),
  enabled_events: z
    .array(enabledEvent)
    .meta({ description: 'The event types sent to this endpoint (see `GET /v1/event-types`); `["*"]` subscribes to every type.' }),
  is_active: z.boolean().meta({ description: "False pauses deliveries (they wait as PAUSED and go when it is true again)." }),
  created: created(),
  updated: updated(),
};

/** The webhook_endpoint object (spec 2.4), as read, listed and updated: never the secret. */
export const WebhookEndpointObject = z
  .strictObject(endpointShape)
  .meta({ id: 'webhook_endpoint', description: 'Where the service sends signed events of one mode.' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpointObject>;

/** The answer of create and rotate-secret: the only ones that show the secret. */
export const WebhookEndpointWithSecretObject = z
  .strictObject({
    ...endpointShape,
    signing_secret: z
      .string()
      .meta({ description: 'The secret (`whsec_…`) that signs the deliveries: shown in this answer only, store it.', example: 'whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH' }),
  })
  .meta({ id: 'webhook_endpoint_with_secret', description: 'A webhook endpoint as created or rotated: the one time `signing_secret` is shown.' });
export type WebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecretObject>;

/** The webhook_endpoint object (spec 2.4). The signing secret is added only by create and rotate. */
export function presentEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    livemode: row.livemode,
    url: row.url,
    description: row.description,
    // Only validated types (or "*") are ever stored: src/webhooks/schema.ts.
    enabled_events: row.enabled_events as WebhookEndpoint['enabled_events'],
    is_active: row.is_active,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}

/** The one answer that shows the secret: right after create or rotate. */
export const presentEndpointWithSecret = (row: EndpointRow): WebhookEndpointWithSecret => ({ ...presentEndpoint(row), signing_secret: row.secret });

export const DeliveryAttemptObject = z
  .strictObject({
    attempt: z.number().int().meta({ description: 'The attempt number, from 1 to 7.' }),
    created: unixTime('When the attempt started.'),
    duration_ms: z.number().int().meta({ description: 'How long the receiver took, in milliseconds.' }),
    status_code: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when no answer came (timeout, connection error)." }),
    error: z.string().nullable().meta({ description: 'What went wrong, when the attempt failed.' }),
    response_body: z.string().nullable().meta({ description: "The first 1 KB of the receiver's answer." }),
  })
  .meta({ id: 'webhook_delivery_attempt', description: 'One POST of a delivery to its endpoint.' });

export function presentAttempt(a: AttemptRow): z.infer<typeof DeliveryAttemptObject> {
  return {
    attempt: a.attempt,
    created: unix(a.started_at),
    duration_ms: a.duration_ms,
    status_code: a.status_code,
    error: a.error,
    response_body: a.response_body,
  };
}

export const WebhookDeliveryObject = z
  .strictObject({
    id: objectId('wd', 'webhook delivery'),
    object: objectName('webhook_delivery'),
    livemode: livemode(),
    event_id: z.string().meta({ description: 'The event delivered.', example: 'evt_01m89emrkt0006k689spej1tdy0e8' }),
    endpoint_id: z.string().meta({ description: 'The endpoint it goes to.', example: 'we_01m89emrkt0006k689spej1tdy0e8' }),
    status: z
      .enum(DELIVERY_STATUSES)
      .meta({ description: '`PENDING` (more attempts to come), `SUCCEEDED`, `FAILED` (7 attempts failed), `PAUSED` (endpoint inactive), `CANCELLED` (endpoint deleted).' }),
    attempt_count: z.number().int().meta({ description: 'Attempts made so far.' }),
    next_attempt_at: nullableUnixTime('When the next attempt is due, while PENDING.'),
    last_attempt_at: nullableUnixTime('When the last attempt started.'),
    attempts: z.array(DeliveryAttemptObject).meta({ description: 'Every attempt made so far, oldest first (empty in the answers of resend, retry-failed and test).' }),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'webhook_delivery', description: 'The delivery of one event to one endpoint: up to 7 attempts over about 10.5 hours.' });
export type WebhookDelivery = z.infer<typeof WebhookDeliveryObject>;

/** A delivery of one event to one endpoint, with every attempt made so far. */
export function presentDelivery(row: DeliveryRow, attempts: readonly AttemptRow[] = []): WebhookDelivery {
  return {
    id: row.id,
    object: 'webhook_delivery',
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

/** The headers of every delivery (sender.ts), as the OpenAPI document's webhooks describe them. */
export const DeliveryHeaders = z.strictObject({
  'Service-Signature': z.string().meta({
    description:
      `\`t=<unix seconds>,v1=<hex>\`: \`v1\` is the lowercase hex HMAC-SHA256, keyed by the endpoint's whole \`whsec_…\` secret, of \`"<t>.<raw body>"\`, computed afresh for each attempt. ` +
      `For ${ROTATION_OVERLAP_MS / 3_600_000} hours after a rotation it carries two \`v1\` entries, the new secret's first. Verify it over the raw bytes received and refuse a \`t\` more than 5 minutes from your clock.`,
    example: 't=1795233990,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  }),
  'Service-Event-Id': z.string().meta({ description: 'The event id (`evt_…`): the same on every retry and resend, to drop duplicates by.' }),
  'Service-Delivery-Id': z.string().meta({ description: 'The delivery id (`wd_…`): a resend is a new delivery.' }),
  'User-Agent': z.literal(USER_AGENT).meta({ description: 'The sender.' }),
});
