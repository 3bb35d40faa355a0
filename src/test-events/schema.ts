import { z } from 'zod';
import { EVENT_TYPE_NAMES, isEventType, type EventType } from '../events/catalogue.ts';

/** POST /v1/webhook-endpoints/:id/test: the type of the sample event to send (required). */
export const SendTestEvent = z.strictObject({
  type: z
    .string({ error: 'must be an event type (see GET /v1/event-types)' })
    .refine(isEventType, `must be one of ${EVENT_TYPE_NAMES.join(', ')}`)
    .transform((t) => t as EventType)
    // The document lists the types (zod-openapi's override; the refine above is what validates).
    .meta({ description: 'The type of the sample event.', override: { enum: [...EVENT_TYPE_NAMES] } }),
});
export type SendTestEvent = z.infer<typeof SendTestEvent>;
