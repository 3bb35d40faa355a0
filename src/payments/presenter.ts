import { unix } from '../lib/time.ts';
import type { PaymentRow } from './store.ts';

/** The payment object (docs/payments.md); webhook payloads use this same function. */
export function presentPayment(row: PaymentRow, checkoutUrl: string) {
  return {
    id: row.id,
    object: 'payment' as const,
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
    email: row.email,
    billing_name: row.billing_name,
    card: row.card_last4 ? { brand: row.card_brand, last4: row.card_last4 } : null,
    next_action: row.next_action,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
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
export type Payment = ReturnType<typeof presentPayment>;
