import { z } from 'zod';
import { INSTALLMENT_INTERVALS } from '../lib/installments.ts';
import { amountCents, created, currencyCode, livemode, metadataObject, nullableUnixTime, objectId, objectName, refId, unixTime, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { PART_STATUSES, PLAN_STATUSES } from './schema.ts';
import type { PartRow, PlanRow } from './store.ts';

const at = (d: Date | null): number | null => (d ? unix(d) : null);

/** One part of a plan. */
export const InstallmentObject = z
  .strictObject({
    number: z.number().int().meta({ description: 'Which part, from 1 (the first, paid on the hosted checkout).', example: 2 }),
    amount_cents: amountCents('What this part charges; the parts add up to `total_cents` exactly (the remainder is on the first).'),
    due_at: unixTime('When it is charged.'),
    status: z
      .enum(PART_STATUSES)
      .meta({ description: '`SCHEDULED` until due; `PAID`; `RETRYING` after a declined charge (see `next_attempt_at`); `FAILED` after the last retry; `CANCELLED` with its plan.' }),
    next_attempt_at: nullableUnixTime('When the next charge of it is due (its date, then the retry schedule); null once PAID, FAILED or CANCELLED.'),
    attempt_count: z.number().int().meta({ description: 'Charges of it tried so far.', example: 1 }),
    payment_id: refId('pay', 'The payment of its last charge (the one that paid it, once PAID).'),
  })
  .meta({ id: 'installment', description: 'One part of an installment plan.' });

/** The installment_plan object (issue 16). */
export const InstallmentPlanObject = z
  .strictObject({
    id: objectId('ip', 'installment plan'),
    object: objectName('installment_plan'),
    livemode: livemode(),
    customer_id: z.string().meta({ description: 'The customer the plan belongs to: the invoice\'s, the one its payment link is attached to, or else a customer made for the payer (an email typed on a page never selects an existing customer).', example: 'cus_01m89emrkt0006k689spej1tdy0e8' }),
    payment_link_id: refId('pl', 'The payment link it pays (null for an invoice\'s plan).'),
    invoice_id: refId('in', 'The invoice it pays (null for a payment link\'s plan).'),
    checkout_session_id: z.string().meta({ description: 'The checkout session of its first part.', example: 'cs_01m89emrkt0006k689spej1tdy0e8' }),
    currency: currencyCode(),
    total_cents: amountCents('What the plan pays in all.'),
    amount_paid_cents: amountCents('The parts paid so far.'),
    count: z.number().int().meta({ description: 'How many parts.', example: 3 }),
    interval: z.enum(INSTALLMENT_INTERVALS).meta({ description: 'Time between two parts: a calendar `week` or `month` from the first payment.' }),
    status: z
      .enum(PLAN_STATUSES)
      .meta({ description: '`ACTIVE` while parts remain; `COMPLETED` when the last is paid; `DEFAULTED` after a part\'s last retry failed; `CANCELLED` by the cancel call.' }),
    card: z
      .strictObject({
        brand: z.string().nullable().meta({ description: 'Card brand, such as `visa`.', example: 'visa' }),
        last4: z.string().meta({ description: 'Last four digits of the card number.', example: '4242' }),
      })
      .nullable()
      .meta({ description: 'The card the later parts are charged on, kept at the processor (never here): brand and last four only.' }),
    installments: z.array(InstallmentObject).meta({ description: 'Every part, in order.' }),
    agreement: z
      .strictObject({
        text: z.string().meta({ description: 'The authorisation the payer ticked, word for word as shown.' }),
        agreed_at: unixTime('When the payer agreed.'),
        ip_address: z.string().nullable().meta({ description: 'The address the payer agreed from.', example: '203.0.113.7' }),
      })
      .meta({ description: 'What the payer agreed to: the card kept and charged on the plan\'s dates.' }),
    email: z.string().meta({ description: 'The email on file of the plan\'s customer when the plan was made. The notices (failed payments, default) and the later parts\' receipts go to the customer\'s email as it is at the time (this one once the customer is deleted), never to an address typed on a page for someone else\'s customer.', example: 'jenny.rosen@example.com' }),
    description: z.string().nullable().meta({ description: 'What is paid, as the payer saw it.' }),
    metadata: metadataObject(),
    completed_at: nullableUnixTime('When it became COMPLETED.'),
    defaulted_at: nullableUnixTime('When it became DEFAULTED.'),
    cancelled_at: nullableUnixTime('When it became CANCELLED.'),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'installment_plan', description: 'A payment link or an invoice paid in parts on a saved card: the first at once on the hosted checkout, the others on their dates.' });
export type InstallmentPlan = z.infer<typeof InstallmentPlanObject>;

/** The installment_plan object; webhook payloads use this same function. */
export function presentPlan(plan: PlanRow, parts: readonly PartRow[]): InstallmentPlan {
  return {
    id: plan.id,
    object: 'installment_plan',
    livemode: plan.livemode,
    customer_id: plan.customer_id,
    payment_link_id: plan.payment_link_id,
    invoice_id: plan.invoice_id,
    checkout_session_id: plan.checkout_session_id,
    currency: plan.currency,
    total_cents: plan.total_cents,
    amount_paid_cents: parts.filter((p) => p.status === 'PAID').reduce((sum, p) => sum + p.amount_cents, 0),
    count: plan.count,
    interval: plan.interval,
    status: plan.status,
    card: plan.card_last4 ? { brand: plan.card_brand, last4: plan.card_last4 } : null,
    installments: parts.map((p) => ({
      number: p.number,
      amount_cents: p.amount_cents,
      due_at: unix(p.due_at),
      status: p.status,
      next_attempt_at: at(p.next_attempt_at),
      attempt_count: p.attempt_count,
      payment_id: p.payment_id,
    })),
    agreement: { text: plan.agreement_text, agreed_at: unix(plan.agreed_at), ip_address: plan.agreement_ip },
    email: plan.email,
    description: plan.description,
    metadata: plan.metadata,
    completed_at: at(plan.completed_at),
    defaulted_at: at(plan.defaulted_at),
    cancelled_at: at(plan.cancelled_at),
    created: unix(plan.created_at),
    updated: unix(plan.updated_at),
  };
}
