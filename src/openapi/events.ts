import { z } from 'zod';
import { CheckoutSessionObject } from '../checkout/presenter.ts';
import { DisputeObject } from '../disputes/presenter.ts';
import { EVENT_TYPES, type EventObjectName, type EventType } from '../events/catalogue.ts';
import { EventObjectSchema } from '../events/presenter.ts';
import { InstallmentPlanObject } from '../installments/presenter.ts';
import { InvoiceObject } from '../invoices/presenter.ts';
import { PaymentObject } from '../payments/presenter.ts';
import { RefundObject } from '../refunds/presenter.ts';

/**
 * The resource of each `object` an event can carry (src/events/catalogue.ts names it per type).
 * events/ knows no business component, so the event's `data.object` gets its shape here.
 */
export const EVENT_RESOURCES = {
  checkout_session: CheckoutSessionObject,
  payment: PaymentObject,
  refund: RefundObject,
  dispute: DisputeObject,
  invoice: InvoiceObject,
  installment_plan: InstallmentPlanObject,
} as const satisfies Record<EventObjectName, z.ZodType>;

const dataOf = (object: z.ZodType) =>
  z.strictObject({ object }).meta({ description: 'The resource concerned, in full, as the API showed it when the event happened.' });

/** The event object of `GET /v1/events`: any type, with the resource of that type. */
export const EventObject = EventObjectSchema.extend({
  data: dataOf(z.discriminatedUnion('object', Object.values(EVENT_RESOURCES) as unknown as [typeof CheckoutSessionObject, ...(typeof CheckoutSessionObject)[]])),
}).meta({ id: 'event', description: 'Something that happened: a state change of a resource. A webhook delivery POSTs exactly this object.' });

/** The body of a delivery of one event type: the event, with that type and its resource. */
export function eventOfType(type: EventType): z.ZodType {
  const entry = EVENT_TYPES.find((t) => t.type === type)!;
  return EventObjectSchema.extend({
    type: z.literal(type).meta({ description: entry.description }),
    data: dataOf(EVENT_RESOURCES[entry.object]),
  }).meta({ description: `An event of type \`${type}\`: ${entry.description}` });
}
