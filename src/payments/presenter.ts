import { z } from 'zod';
import { amountCents, created, currencyCode, livemode, nullableUnixTime, objectId, objectName, refId, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import type { PaymentRow } from './store.ts';

/** The payment object (docs/payments.md). */
export const PaymentObject = z
  .strictObject({
    id: objectId('pay', 'payment'),
    object: objectName('payment'),
    livemode: livemode(),
    status: z
      .enum(['PENDING', 'SUCCEEDED', 'FAILED'])
      .meta({ description: '`PENDING` while the processor is asked or 3-D Secure waits, then `SUCCEEDED` or `FAILED`.' }),
    amount_cents: amountCents("The session's amount."),
    currency: currencyCode(),
    description: z.string().nullable().meta({ description: "The session's description when the attempt was made." }),
    customer_id: refId('cus', "The session's customer."),
    checkout_session_id: refId('cs', 'The checkout session paid (or tried); null for a later part of an installment plan, charged without one.'),
    payment_intent_id: z.string().nullable().meta({ description: "The processor's payment intent, shared by every attempt on the session." }),
    payment_link_id: refId('pl', 'The payment link the session was opened from.'),
    invoice_id: refId('in', 'The invoice the payment pays, in full or in part.'),
    installment_plan_id: refId('ip', 'The installment plan this payment pays a part of (its first part, paid on the hosted checkout, or a later one, charged on the saved card).'),
    installment_number: z.number().int().nullable().meta({ description: 'Which part of the plan it pays, from 1; null outside a plan.', example: 2 }),
    email: z.string().nullable().meta({ description: 'The email the payer entered (the receipt goes there).' }),
    billing_name: z.string().nullable().meta({ description: '"Name on card" as entered.' }),
    card: z
      .strictObject({
        brand: z.string().nullable().meta({ description: 'Card brand, such as `visa`.', example: 'visa' }),
        last4: z.string().meta({ description: 'Last four digits of the card number.', example: '4242' }),
        fingerprint: z.string().nullable().meta({ description: "The card's fingerprint: the same for every payment with the same card number within this deployment (the simulator) or Stripe account, never the number. For block lists and velocity rules.", example: 'fp_3f9c0a1b2d4e5f6071829304' }),
        country: z.string().nullable().meta({ description: "The card's issuing country (ISO 3166-1 alpha-2), as the processor reports it.", example: 'US' }),
      })
      .nullable()
      .meta({ description: 'All that is kept of a card: never its number, expiry or CVC.' }),
    next_action: z.string().nullable().meta({ description: "`three_d_secure` while the attempt waits for the payer's challenge; else null." }),
    failure_code: z.string().nullable().meta({ description: 'Why a FAILED payment failed, such as `card_declined` or `insufficient_funds`.' }),
    failure_message: z.string().nullable().meta({ description: 'The message the payer was shown.' }),
    fraud: z
      .strictObject({
        action: z.enum(['allow', 'block', 'review']).meta({ description: 'What the rule or block list entry decided.' }),
        rule_id: z.string().meta({ description: 'The fraud rule (`frl_…`) or block list entry (`fli_…`) that decided.', example: 'frl_01JZ8Q4W6X0N3C1V7E2K5M9R4T' }),
        reason: z.string().meta({ description: 'Why, in words: the rule\'s name and conditions, or the kind of block list entry. Never shown to the payer.', example: 'Rule "Card testing": client_ip_attempts in 600s >= 5' }),
      })
      .nullable()
      .meta({ description: 'The fraud rules\' decision on the hosted page (docs/fraud.md); null when no rule or list matched.' }),
    review: z
      .strictObject({
        status: z.enum(['open', 'approving', 'refusing', 'approved', 'refused', 'expired']).meta({ description: '`open` while held (authorised, not captured); `approving`/`refusing` while the processor is told; then `approved`, `refused` or `expired` (refused at the deadline).' }),
        deadline: nullableUnixTime('When an open review is refused unless a person decides first.'),
        closed_at: nullableUnixTime('When the review closed.'),
        closed_by: z.string().nullable().meta({ description: 'Who decided: the dashboard user\'s email, or `deadline`.', example: 'ada@example.com' }),
      })
      .nullable()
      .meta({ description: 'A review opened by a `review` rule; null otherwise.' }),
    amount_refunded_cents: amountCents('The sum of its SUCCEEDED refunds.'),
    refunded: z.boolean().meta({ description: 'True once `amount_refunded_cents` reaches `amount_cents`.' }),
    disputed: z.boolean().meta({ description: 'True once the processor opened a dispute on it; a disputed payment cannot be refunded.' }),
    receipt_url: z.string().nullable().meta({ description: 'The hosted receipt, once SUCCEEDED.' }),
    succeeded_at: nullableUnixTime('When it became SUCCEEDED.'),
    failed_at: nullableUnixTime('When it became FAILED.'),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'payment', description: 'One attempt to charge a card: for a checkout session, made on the hosted page, or for a later part of an installment plan, on the card saved with its first part.' });
export type Payment = z.infer<typeof PaymentObject>;

/** The payment object (docs/payments.md); webhook payloads use this same function. */
export function presentPayment(row: PaymentRow, checkoutUrl: string): Payment {
  return {
    id: row.id,
    object: 'payment',
    livemode: row.livemode,
    status: row.status,
    amount_cents: row.amount_cents,
    currency: row.currency,
    description: row.description,
    customer_id: row.customer_id,
    checkout_session_id: row.checkout_session_id,
    payment_intent_id: row.payment_intent_id,
    payment_link_id: row.payment_link_id,
    invoice_id: row.invoice_id,
    installment_plan_id: row.installment_plan_id,
    installment_number: row.installment_plan_id ? row.installment_number : null,
    email: row.email,
    billing_name: row.billing_name,
    card: row.card_last4 ? { brand: row.card_brand, last4: row.card_last4, fingerprint: row.card_fingerprint ?? null, country: row.card_country ?? null } : null,
    next_action: row.next_action,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    fraud: row.fraud_action && row.fraud_rule_id ? { action: row.fraud_action, rule_id: row.fraud_rule_id, reason: row.fraud_reason ?? '' } : null,
    review: row.review_status
      ? {
          status: row.review_status,
          deadline: row.review_deadline ? unix(row.review_deadline) : null,
          closed_at: row.review_closed_at ? unix(row.review_closed_at) : null,
          closed_by: row.review_closed_by ?? null,
        }
      : null,
    amount_refunded_cents: row.amount_refunded_cents,
    refunded: row.amount_refunded_cents > 0 && row.amount_refunded_cents >= row.amount_cents,
    disputed: row.disputed,
    receipt_url: row.status === 'SUCCEEDED' && row.checkout_session_id ? `${checkoutUrl}/${row.checkout_session_id}/receipt` : null,
    succeeded_at: row.succeeded_at ? unix(row.succeeded_at) : null,
    failed_at: row.failed_at ? unix(row.failed_at) : null,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
