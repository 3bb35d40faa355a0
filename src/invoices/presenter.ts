import { unix } from '../lib/time.ts';
import type { InvoiceEmailData } from '../email/templates.ts';
import type { InvoiceRow } from './store.ts';

const at = (d: Date | null): number | null => (d ? unix(d) : null);

/** The items in the order the API takes them (jsonb keeps its keys in its own order). */
const lineItems = (row: InvoiceRow) => row.line_items.map((i) => ({ name: i.name, quantity: i.quantity, amount: i.amount }));

/** The invoice object (README, "Invoices"); webhook payloads use this same function. */
export function presentInvoice(row: InvoiceRow, invoiceUrl: string) {
  return {
    id: row.id,
    object: 'invoice' as const,
    livemode: row.livemode,
    customer_id: row.customer_id,
    number: row.number,
    status: row.status,
    currency: row.currency,
    line_items: lineItems(row),
    total_cents: row.total_cents,
    amount_paid_cents: row.amount_paid_cents,
    amount_due_cents: row.amount_due_cents,
    description: row.description,
    due_date: at(row.due_date),
    allow_partial_payments: row.allow_partial_payments,
    minimum_payment_cents: row.minimum_payment_cents,
    // The page is live once the invoice is sent.
    hosted_invoice_url: row.sent_at ? `${invoiceUrl}/${row.hosted_token}` : null,
    invoice_pdf: row.sent_at ? `${invoiceUrl}/${row.hosted_token}/pdf` : null,
    finalized_at: at(row.finalized_at),
    sent_at: at(row.sent_at),
    paid_at: at(row.paid_at),
    voided_at: at(row.voided_at),
    marked_uncollectible_at: at(row.marked_uncollectible_at),
    reminders: { count: row.reminder_count, last_sent_at: at(row.last_reminder_at), next_at: at(row.next_reminder_at) },
    metadata: row.metadata,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
export type Invoice = ReturnType<typeof presentInvoice>;

/** What the invoice and reminder emails show of an invoice (a finalized one: it has its number). */
export function invoiceEmailData(row: InvoiceRow, merchantName: string | null, invoiceUrl: string): InvoiceEmailData {
  const url = `${invoiceUrl}/${row.hosted_token}`;
  return {
    merchantName,
    number: row.number ?? '',
    currency: row.currency,
    lineItems: lineItems(row),
    totalCents: row.total_cents,
    amountPaidCents: row.amount_paid_cents,
    amountDueCents: row.amount_due_cents,
    description: row.description,
    dueDate: row.due_date,
    url,
    pdfUrl: `${url}/pdf`,
  };
}
