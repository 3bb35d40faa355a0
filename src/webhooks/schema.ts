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

export const CreateEndpoint = z.strictObject({
  url,
  enabled_events: enabledEvents,
  description: text().nullable().optional(),
});
export type CreateEndpoint = z.infer<typeof CreateEndpoint>;

export const UpdateEndpoint = z.strictObject({
  url: url.optional(),
  enabled_events: enabledEvents.optional(),
  description: text().nullable().optional(),
  is_active: z.boolean().optional(),
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
