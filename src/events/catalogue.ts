/**
 * Every event type: the seven of spec 6.2 in the order the spec lists them (the two invoice events
 * are accepted in `enabled_events` so that a subscription written today keeps working when invoices
 * arrive), then the refund, dispute and invoice events this service adds.
 */
export const EVENT_TYPES = [
  { type: 'checkout.session.completed', description: 'A checkout session moved to COMPLETE.' },
  { type: 'checkout.session.expired', description: 'A checkout session moved to EXPIRED, by auto-expiry or by the expire call.' },
  { type: 'payment.succeeded', description: 'A payment became SUCCEEDED (checkout, invoice, installment and payment link payments).' },
  { type: 'payment.failed', description: 'A charge was declined.' },
  { type: 'payment.refunded', description: 'A full or partial refund was processed.' },
  { type: 'invoice.paid', description: 'An invoice reached amount_due_cents = 0.' },
  { type: 'invoice.sent', description: 'An invoice was delivered to the customer (email and hosted URL active).' },
  { type: 'refund.created', description: 'A refund was requested: it is PENDING until the processor answers.' },
  { type: 'refund.updated', description: "A refund's status changed (SUCCEEDED, FAILED or CANCELLED)." },
  { type: 'dispute.created', description: 'A payment was disputed by the cardholder (a chargeback).' },
  { type: 'dispute.updated', description: "A dispute's evidence or status changed." },
  { type: 'dispute.closed', description: 'A dispute was decided: WON or LOST.' },
  { type: 'invoice.created', description: 'An invoice was created as a DRAFT.' },
  { type: 'invoice.updated', description: 'A DRAFT invoice was edited, or a payment reduced the amount due of an invoice that is not yet paid.' },
  { type: 'invoice.deleted', description: 'A DRAFT invoice was deleted.' },
  { type: 'invoice.finalized', description: 'An invoice moved from DRAFT to OPEN and received its number.' },
  { type: 'invoice.voided', description: 'An invoice moved to VOID: it accepts no payment.' },
  { type: 'invoice.marked_uncollectible', description: 'An invoice moved to UNCOLLECTIBLE (it can still be paid).' },
] as const;

export type EventType = (typeof EVENT_TYPES)[number]['type'];

export const EVENT_TYPE_NAMES: readonly EventType[] = EVENT_TYPES.map((t) => t.type);

export const isEventType = (v: string): v is EventType => (EVENT_TYPE_NAMES as readonly string[]).includes(v);

/** The catalogue as `GET /v1/event-types` shows it. */
export function presentEventTypes() {
  return {
    object: 'list' as const,
    url: '/v1/event-types',
    has_more: false,
    data: EVENT_TYPES.map((t) => ({ object: 'event_type' as const, type: t.type, description: t.description })),
  };
}
