import { z } from 'zod';
import { amountCents, created, currencyCode, livemode, metadataObject, nullableUnixTime, objectId, objectName, refId, unixTime, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { SESSION_STATUSES } from './schema.ts';
import type { SessionRow } from './store.ts';

/** The hosted page of a session: `$CHECKOUT_URL/<id>`. */
export const sessionUrl = (checkoutUrl: string, id: string): string => `${checkoutUrl}/${id}`;

/** One line of a session or an invoice, as the API takes it. */
export const LineItemObject = z
  .strictObject({
    name: z.string().meta({ description: 'What is sold, as the payer sees it.' }),
    quantity: z.number().int().meta({ description: 'How many.', example: 1 }),
    amount: amountCents('The price of one.'),
  })
  .meta({ id: 'line_item', description: 'One line of a checkout session or an invoice.' });

/** The checkout_session object of the API (spec 2.3). */
export const CheckoutSessionObject = z
  .strictObject({
    id: objectId('cs', 'checkout session'),
    object: objectName('checkout_session'),
    livemode: livemode(),
    status: z.enum(SESSION_STATUSES).meta({ description: '`OPEN` after creation, `COMPLETE` once paid, `EXPIRED` after `expires_at` or the expire call.' }),
    payment_status: z
      .enum(['unpaid', 'paid', 'no_payment_required'])
      .meta({ description: 'Independent of `status`: an OPEN session may briefly be `paid` before it becomes COMPLETE. `no_payment_required` for a `setup` session.' }),
    mode: z
      .enum(['payment', 'setup'])
      .meta({ description: '`payment` charges `amount_cents`; `setup` (a customer replacing the card of an installment plan) saves a card and charges nothing (`amount_cents` 0).' }),
    amount_cents: amountCents('The total to be charged: `amount`, or the sum of the line items.'),
    currency: currencyCode(),
    success_url: z
      .string()
      .meta({ description: 'Where the payer goes after paying; `{CHECKOUT_SESSION_ID}` in it is replaced by the session id.' }),
    cancel_url: z.string().nullable().meta({ description: "Where the page's cancel link goes; without it the link is hidden." }),
    customer_id: refId('cus', 'The attached customer.'),
    customer_email: z.string().nullable().meta({ description: 'The email a receipt goes to when no customer is attached.' }),
    description: z.string().nullable().meta({ description: 'Shown to the payer on the hosted page.' }),
    line_items: z.array(LineItemObject).nullable().meta({ description: 'The itemized breakdown shown on the page.' }),
    payment_intent_id: z
      .string()
      .nullable()
      .meta({ description: "The processor's payment intent, made once the payer starts paying; shared by every attempt on the session." }),
    payment_id: refId('pay', 'The successful `payment`, set when the session completes.'),
    payment_link_id: refId('pl', 'The payment link the session was opened from.'),
    invoice_id: refId('in', 'The invoice the session pays, opened from its hosted page.'),
    metadata: metadataObject(),
    expires_at: unixTime('After this the session cannot be paid (default: 24 hours after creation).'),
    completed_at: nullableUnixTime('When the session became COMPLETE.'),
    url: z.string().meta({ description: 'The hosted checkout page to send the payer to.' }),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'checkout_session', description: 'One payment in progress, paid on a hosted page at its `url`.' });
export type CheckoutSession = z.infer<typeof CheckoutSessionObject>;

/** The checkout_session object of the API (spec 2.3); webhook payloads use this same function. */
export function presentSession(row: SessionRow, checkoutUrl: string): CheckoutSession {
  return {
    id: row.id,
    object: 'checkout_session',
    livemode: row.livemode,
    status: row.status,
    payment_status: row.payment_status,
    mode: row.mode,
    amount_cents: row.amount_cents,
    currency: row.currency,
    success_url: row.success_url,
    cancel_url: row.cancel_url,
    customer_id: row.customer_id,
    customer_email: row.customer_email,
    description: row.description,
    // In the order the API takes them (jsonb keeps its keys in its own order).
    line_items: row.line_items?.map((i) => ({ name: i.name, quantity: i.quantity, amount: i.amount })) ?? null,
    payment_intent_id: row.payment_intent_id,
    payment_id: row.payment_id,
    payment_link_id: row.payment_link_id,
    invoice_id: row.invoice_id,
    metadata: row.metadata,
    expires_at: unix(row.expires_at),
    completed_at: row.completed_at ? unix(row.completed_at) : null,
    url: sessionUrl(checkoutUrl, row.id),
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
