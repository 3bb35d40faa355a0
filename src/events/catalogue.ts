import { z } from 'zod';

/**
 * Every event type: the seven of spec 6.2 in the order the spec lists them (the two invoice events
 * are accepted in `enabled_events` so that a subscription written today keeps working when invoices
 * arrive), then the refund, dispute, invoice, installment plan, review and endpoint events this service adds. `object` names the
 * resource an event of the type carries in `data.object` (the OpenAPI document's webhooks).
 */
export const EVENT_TYPES = [
  { type: 'checkout.session.completed', object: 'checkout_session', description: 'A checkout session moved to COMPLETE.' },
  { type: 'checkout.session.expired', object: 'checkout_session', description: 'A checkout session moved to EXPIRED, by auto-expiry or by the expire call.' },
  { type: 'payment.succeeded', object: 'payment', description: 'A payment became SUCCEEDED (checkout, invoice, installment and payment link payments).' },
  { type: 'payment.failed', object: 'payment', description: 'A charge was declined.' },
  { type: 'payment.refunded', object: 'payment', description: 'A full or partial refund was processed.' },
  { type: 'invoice.paid', object: 'invoice', description: 'An invoice reached amount_due_cents = 0.' },
  { type: 'invoice.sent', object: 'invoice', description: 'An invoice was delivered to the customer (email and hosted URL active).' },
  { type: 'refund.created', object: 'refund', description: 'A refund was requested: it is PENDING until the processor answers.' },
  { type: 'refund.updated', object: 'refund', description: "A refund's status changed (SUCCEEDED, FAILED or CANCELLED)." },
  { type: 'dispute.created', object: 'dispute', description: 'A payment was disputed by the cardholder (a chargeback).' },
  { type: 'dispute.updated', object: 'dispute', description: "A dispute's evidence or status changed." },
  { type: 'dispute.closed', object: 'dispute', description: 'A dispute was decided: WON or LOST.' },
  { type: 'invoice.created', object: 'invoice', description: 'An invoice was created as a DRAFT.' },
  { type: 'invoice.updated', object: 'invoice', description: 'A DRAFT invoice was edited, or a payment reduced the amount due of an invoice that is not yet paid.' },
  { type: 'invoice.deleted', object: 'invoice', description: 'A DRAFT invoice was deleted.' },
  { type: 'invoice.finalized', object: 'invoice', description: 'An invoice moved from DRAFT to OPEN and received its number.' },
  { type: 'invoice.voided', object: 'invoice', description: 'An invoice moved to VOID: it accepts no payment.' },
  { type: 'invoice.marked_uncollectible', object: 'invoice', description: 'An invoice moved to UNCOLLECTIBLE (it can still be paid).' },
  { type: 'installment_plan.created', object: 'installment_plan', description: 'A payer chose an installment plan and its first part was paid: the plan is ACTIVE.' },
  { type: 'installment_plan.completed', object: 'installment_plan', description: 'The last part of an installment plan was paid: the plan is COMPLETED.' },
  { type: 'installment_plan.defaulted', object: 'installment_plan', description: 'A part of an installment plan failed its last retry: the plan is DEFAULTED and its unpaid parts CANCELLED.' },
  { type: 'installment_plan.cancelled', object: 'installment_plan', description: 'An installment plan was cancelled: its unpaid parts are CANCELLED.' },
  { type: 'payment.review_opened', object: 'payment', description: 'A fraud rule held a payment for review: authorised, not captured, until a person approves or refuses it (or its deadline passes).' },
  { type: 'payment.review_closed', object: 'payment', description: "A payment's review closed: `review.status` is approved (the payment succeeds), refused or expired (it fails)." },
  {
    type: 'webhook_endpoint.disabled',
    object: 'webhook_endpoint',
    description: "The service disabled one of the account's webhook endpoints because every attempt to it failed for the failure window; sent to the account's other endpoints.",
  },
] as const;

export type EventType = (typeof EVENT_TYPES)[number]['type'];
/** The resource an event type's `data.object` holds (its `object` field). */
export type EventObjectName = (typeof EVENT_TYPES)[number]['object'];

export const EVENT_TYPE_NAMES: readonly EventType[] = EVENT_TYPES.map((t) => t.type);

export const isEventType = (v: string): v is EventType => (EVENT_TYPE_NAMES as readonly string[]).includes(v);

export const EventTypeObject = z
  .strictObject({
    object: z.literal('event_type').meta({ description: 'Always `event_type`.' }),
    type: z.enum(EVENT_TYPE_NAMES as [EventType, ...EventType[]]).meta({ description: 'The name to list in `enabled_events`.' }),
    description: z.string().meta({ description: 'When an event of this type is sent.' }),
    schema: z
      .record(z.string(), z.unknown())
      .meta({ description: "The JSON Schema (draft 2020-12) of a delivery's body of this type, generated from the same schema as the OpenAPI document's `webhooks` entry: generate receiver types from it." }),
  })
  .meta({ id: 'event_type', description: 'A type of event the service sends.' });

export const EventTypeListObject = z
  .strictObject({
    object: z.literal('list').meta({ description: 'Always `list`.' }),
    url: z.string().meta({ description: 'The path this list was read from.', example: '/v1/event-types' }),
    has_more: z.literal(false).meta({ description: 'Always false: every type is on the one page.' }),
    data: z.array(EventTypeObject).meta({ description: 'Every event type, in the order of the catalogue.' }),
  })
  .meta({ id: 'event_type_list', description: 'The catalogue of event types.' });

/** Each type's payload schema: made where the resources' schemas are known (src/openapi/events.ts), handed in by src/app.ts. */
export type PayloadSchemaOf = (type: EventType) => Record<string, unknown>;

/** The catalogue as `GET /v1/event-types` shows it. */
export function presentEventTypes(schemaOf: PayloadSchemaOf): z.infer<typeof EventTypeListObject> {
  return {
    object: 'list',
    url: '/v1/event-types',
    has_more: false,
    data: EVENT_TYPES.map((t) => ({ object: 'event_type', type: t.type, description: t.description, schema: schemaOf(t.type) })),
  };
}
