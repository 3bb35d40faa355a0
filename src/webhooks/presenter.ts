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

export const HEALTH_STATUSES = ['healthy', 'failing', 'disabled'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** `disabled` only when the service disabled it (a merchant's pause is `is_active: false` alone). */
export function healthStatus(e: Pick<EndpointRow, 'is_active' | 'failing_since' | 'disabled_at'>): HealthStatus {
  if (!e.is_active && e.disabled_at) return 'disabled';
  return e.failing_since ? 'failing' : 'healthy';
}

const EndpointHealthObject = z
  .strictObject({
    status: z
      .enum(HEALTH_STATUSES)
      .meta({ description: '`healthy` (the last attempt succeeded, or none was made), `failing` (every attempt since `failing_since` failed), `disabled` (the service disabled the endpoint for its failures: resume it with `is_active: true`).' }),
    failing_since: nullableUnixTime('When the current run of failed attempts began; null when healthy.'),
    failed_attempts: z.number().int().meta({ description: 'Failed attempts since `failing_since`.' }),
    disabled_at: nullableUnixTime('When the service disabled the endpoint; null unless `disabled`.'),
  })
  .meta({ id: 'webhook_endpoint_health', description: 'How deliveries to the endpoint have been going. An endpoint whose every attempt fails for 5 days (a setting) is disabled; its events are held, none lost.' });

/** What every answer and page shows of a custom header's value. */
export const HEADER_MASK = '********';
export const maskedHeaders = (headers: Record<string, string>): Record<string, typeof HEADER_MASK> =>
  Object.fromEntries(Object.keys(headers).map((name) => [name, HEADER_MASK]));

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
  health: EndpointHealthObject,
  headers: z
    .record(z.string(), z.literal(HEADER_MASK))
    .meta({ description: 'The custom headers sent with every delivery, by name; values are write-only and always shown masked.', example: { 'X-Gateway-Key': HEADER_MASK } }),
  rate_limit: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'At most this many deliveries per second to the endpoint, across every worker; null: unthrottled.', example: 10 }),
  ordered: z
    .boolean()
    .meta({ description: "Deliveries about the same object (`data.object.id`) go one after the other, in event order, each once the one before succeeded or failed for good." }),
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
    health: {
      status: healthStatus(row),
      failing_since: unixOrNull(row.failing_since),
      failed_attempts: row.failed_attempts,
      disabled_at: row.is_active ? null : unixOrNull(row.disabled_at),
    },
    headers: maskedHeaders(row.headers),
    rate_limit: row.rate_limit,
    ordered: row.ordered,
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
    response_body: z
      .string()
      .nullable()
      .meta({ description: "The first 1 KB of the receiver's answer; null when none came, or when the address connected to was not public (a local test-mode endpoint) and this service is not clearly on a developer's machine (its PUBLIC_BASE_URL is not loopback)." }),
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

const periodShape = (span: string) =>
  z
    .strictObject({
      attempts: z.number().int().meta({ description: `Attempts made in the last ${span}.` }),
      succeeded: z.number().int().meta({ description: 'Attempts answered with a 2xx.' }),
      failed: z.number().int().meta({ description: 'Attempts that failed (another status, a timeout, a connection error).' }),
      success_rate: z.number().nullable().meta({ description: 'succeeded / attempts, from 0 to 1; null without attempts.' }),
      latency_p50_ms: z.number().int().nullable().meta({ description: 'Median attempt duration, ms (from a histogram: within its bucket); null without attempts.' }),
      latency_p95_ms: z.number().int().nullable().meta({ description: '95th percentile of attempt durations, ms; null without attempts.' }),
    })
    .meta({ description: `Deliveries to the endpoint over the last ${span}.` });

export const WebhookEndpointStatsObject = z
  .strictObject({
    object: objectName('webhook_endpoint_stats'),
    endpoint_id: z.string().meta({ description: 'The endpoint (`we_…`).', example: 'we_01m89emrkt0006k689spej1tdy0e8' }),
    last_24_hours: periodShape('24 hours'),
    last_30_days: periodShape('30 days'),
    hourly: z
      .array(
        z.strictObject({
          hour: unixTime('The start of the hour.'),
          attempts: z.number().int().meta({ description: 'Attempts in that hour.' }),
          succeeded: z.number().int().meta({ description: 'Of which answered with a 2xx.' }),
        }),
      )
      .meta({ description: 'The last 24 hours, hour by hour, oldest first (the dashboard chart).' }),
  })
  .meta({ id: 'webhook_endpoint_stats', description: "Success rate, attempts and latency of an endpoint's deliveries over 24 hours and 30 days." });
export type WebhookEndpointStats = z.infer<typeof WebhookEndpointStatsObject>;
