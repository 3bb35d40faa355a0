import { unix } from '../lib/time.ts';
import type { SessionRow } from './store.ts';

/** The hosted page of a session: `$CHECKOUT_URL/<id>`. */
export const sessionUrl = (checkoutUrl: string, id: string): string => `${checkoutUrl}/${id}`;

/** The checkout_session object of the API (spec 2.3); webhook payloads use this same function. */
export function presentSession(row: SessionRow, checkoutUrl: string) {
  return {
    id: row.id,
    object: 'checkout_session' as const,
    livemode: row.livemode,
    status: row.status,
    payment_status: row.payment_status,
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
export type CheckoutSession = ReturnType<typeof presentSession>;
