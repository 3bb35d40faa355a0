import { z } from 'zod';
import { EVENT_TYPE_NAMES, isEventType } from '../events/catalogue.ts';
import { listQuerySchema } from '../lib/pagination.ts';
import { text, unixSeconds } from '../lib/validate.ts';
import type { DeliveryStatus } from './deliveries.ts';

/** Endpoints per account and mode. */
export const MAX_ENDPOINTS = 16;

const url = z.string().min(1, 'must not be empty').max(2048, 'must be at most 2048 characters');

/** A non-empty list of known event types, or exactly ["*"]. */
const enabledEvents = z
  .array(z.string(), { error: 'must be an array of event types' })
  .min(1, 'must list at least one event type, or "*"')
  .max(EVENT_TYPE_NAMES.length + 1, 'lists too many event types')
  .superRefine((types, ctx) => {
    if (types.includes('*')) {
      if (types.length > 1) ctx.addIssue({ code: 'custom', message: '"*" subscribes to every type and must be the only entry' });
      return;
    }
    const unknown = types.find((t) => !isEventType(t));
    if (unknown !== undefined) {
      ctx.addIssue({ code: 'custom', message: `unknown event type '${unknown}' (see GET /v1/event-types)` });
    }
  })
  .transform((types) => [...new Set(types)])
  // The document lists the types (zod-openapi's override; the refinement above is what validates).
  .meta({
    description: 'The event types to send (see `GET /v1/event-types`), or `["*"]` alone for every type.',
    override: { items: { type: 'string', enum: [...EVENT_TYPE_NAMES, '*'] } },
  });

/** Custom headers per endpoint (issue 26, point 3). */
export const MAX_HEADERS = 10;
const HEADER_VALUE_MAX = 1000;
/** RFC 9110 token: what a field name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * Names an endpoint may not set: the service's own (its signature and ids, and its `webhook-*`
 * family kept for Standard Webhooks), what the sender sets about the body and itself, and the
 * hop-by-hop headers (RFC 9110 7.6.1), which belong to one connection and not to the message.
 */
const RESERVED_HEADERS = new Set([
  'content-type', 'content-length', 'content-encoding', 'user-agent', 'host', 'date', 'expect',
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'trailers',
  'transfer-encoding', 'upgrade', 'http2-settings',
]);
export const headerNameProblem = (name: string): string | null => {
  if (!TOKEN.test(name)) return 'is not a valid header name (letters, digits and !#$%&\'*+-.^_`|~ only)';
  const lower = name.toLowerCase();
  if (RESERVED_HEADERS.has(lower) || lower.startsWith('webhook-') || lower.startsWith('service-') || lower.startsWith(':')) {
    return 'is set by the service (its own, content and hop-by-hop headers cannot be set per endpoint)';
  }
  return null;
};
/** Visible ASCII, spaces and tabs inside: no line break can start another header. */
const HEADER_VALUE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;

const headerEntries = (nullable: boolean) =>
  z
    .record(z.string(), nullable ? z.string().nullable() : z.string(), { error: 'must be an object of header names to values' })
    .superRefine((headers, ctx) => {
      const seen = new Set<string>();
      for (const [name, value] of Object.entries(headers)) {
        const problem = headerNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
        else if (seen.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: [name], message: 'is given twice (header names are case-insensitive)' });
        else if (value !== null && (value.length > HEADER_VALUE_MAX || !HEADER_VALUE.test(value))) {
          ctx.addIssue({ code: 'custom', path: [name], message: `must be 1 to ${HEADER_VALUE_MAX} visible ASCII characters (spaces inside allowed, no line breaks)` });
        }
        seen.add(name.toLowerCase());
      }
      if (!nullable && seen.size > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `has at most ${MAX_HEADERS} headers` });
    });

/** The most a throttle may allow: past it, a throttle is no protection for a receiver. */
export const MAX_RATE_LIMIT = 1000;
const rateLimit = z
  .number({ error: 'must be a whole number of deliveries per second, or null' })
  .int('must be a whole number of deliveries per second')
  .min(1, 'must be at least 1 (null: unthrottled)')
  .max(MAX_RATE_LIMIT, `must be at most ${MAX_RATE_LIMIT}`)
  .nullable()
  .optional()
  .meta({ description: `At most this many deliveries per second to the endpoint, across every worker (1 to ${MAX_RATE_LIMIT}); null: as fast as the workers go. Deliveries over the rate wait their turn (retries after an outage too); other endpoints are not slowed.` });
const ordered = z
  .boolean({ error: 'must be true or false' })
  .optional()
  .meta({ description: "Deliveries about the same object (the event's `data.object.id`) are sent one after the other in event order, each once the one before succeeded or failed for good; other objects flow in parallel. Costs throughput per object, and a failing delivery holds its object's later ones for its retries (about 10.5 hours)." });

export const CreateEndpoint = z.strictObject({
  url,
  enabled_events: enabledEvents,
  description: text().nullable().optional(),
  headers: headerEntries(false)
    .optional()
    .meta({ description: `Up to ${MAX_HEADERS} headers sent with every delivery and test event (an API gateway's key, say). Values are write-only: every answer shows them masked.` }),
  rate_limit: rateLimit,
  ordered,
});
export type CreateEndpoint = z.infer<typeof CreateEndpoint>;

export const UpdateEndpoint = z.strictObject({
  url: url.optional(),
  enabled_events: enabledEvents.optional(),
  description: text().nullable().optional(),
  is_active: z.boolean().optional(),
  headers: headerEntries(true)
    .optional()
    .meta({ description: `Sets the headers named (a value replaces the one stored), removes those given null, keeps the others; at most ${MAX_HEADERS} in all.` }),
  rate_limit: rateLimit,
  ordered,
});
export type UpdateEndpoint = z.infer<typeof UpdateEndpoint>;

export const ListEndpoints = listQuerySchema('we', {});
export type ListEndpoints = z.infer<typeof ListEndpoints>;

/** rotate-secret takes no parameters. */
export const RotateSecret = z.strictObject({});

/** POST /v1/events/:id/resend: every subscribed endpoint, or the one named. */
export const ResendEvent = z.strictObject({
  endpoint_id: z.string().optional().meta({ description: 'Only this endpoint (`we_…`), subscribed to the type or not; by default every endpoint subscribed now.' }),
});
export type ResendEvent = z.infer<typeof ResendEvent>;

export const ListDeliveries = listQuerySchema('wd', {});
export type ListDeliveries = z.infer<typeof ListDeliveries>;

export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'PAUSED', 'CANCELLED'] as const satisfies readonly DeliveryStatus[];

/** GET /v1/webhook-endpoints/:id/deliveries: newest first, optionally of one status. */
export const ListEndpointDeliveries = listQuerySchema('wd', {
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});
export type ListEndpointDeliveries = z.infer<typeof ListEndpointDeliveries>;

/** POST /v1/webhook-endpoints/:id/retry-failed: the failed deliveries created at or after `since` (required). */
export const RetryFailed = z.strictObject({
  since: unixSeconds().meta({ description: 'Only the deliveries that failed and were made at or after this time, Unix seconds.' }),
});
export type RetryFailed = z.infer<typeof RetryFailed>;

/** GET /v1/webhook-endpoints/:id/stats takes no parameters. */
export const EndpointStatsQuery = z.strictObject({});
