import { z } from 'zod';
import { LineItemObject } from '../checkout/presenter.ts';
import type { InvoiceEmailData } from '../email/templates.ts';
import { amountCents, created, currencyCode, livemode, metadataObject, nullableUnixTime, objectId, objectName, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { effectiveOptions, InstallmentOptionObject } from '../lib/installments.ts';
import { INVOICE_STATUSES } from './schema.ts';
import type { InvoiceRow } from './store.ts';

const at = (d: Date | null): number | null => (d ? unix(d) : null);

/** The items in the order the API takes them (jsonb keeps its keys in its own order). */
const lineItems = (row: InvoiceRow) => row.line_items.map((i) => ({ name: i.name, quantity: i.quantity, amount: i.amount }));

/** The invoice object (README, "Invoices"). */
export const InvoiceObject = z
  .strictObject({
    id: objectId('in', 'invoice'),
    object: objectName('invoice'),
    livemode: livemode(),
    customer_id: z.string().meta({ description: 'The customer billed.', example: 'cus_01m89emrkt0006k689spej1tdy0e8' }),
    number: z.string().nullable().meta({ description: 'Given when finalized: `INV-0001`, gapless per account and mode.', example: 'INV-0001' }),
    status: z
      .enum(INVOICE_STATUSES)
      .meta({ description: '`DRAFT` while edited; `OPEN` once finalized; `PAID` when nothing is due; `VOID` or `UNCOLLECTIBLE` by their calls.' }),
    currency: currencyCode(),
    line_items: z.array(LineItemObject).meta({ description: 'What is billed.' }),
    total_cents: amountCents('The sum of the line items.'),
    amount_paid_cents: amountCents('Paid so far.'),
    amount_due_cents: amountCents('Still to pay: `total_cents` less `amount_paid_cents`.'),
    description: z.string().nullable().meta({ description: 'Shown on the invoice.' }),
    due_date: nullableUnixTime('When payment is due; reminders start after it.'),
    allow_partial_payments: z.boolean().meta({ description: 'The payer may pay part of what is due on the hosted page.' }),
    minimum_payment_cents: z.number().int().nullable().meta({ description: 'The smallest part payment accepted (unless it is all that is due).' }),
    allow_installments: z.boolean().meta({ description: 'The hosted page offers to pay what is due in installments.' }),
    installment_options: z
      .array(InstallmentOptionObject)
      .meta({ description: 'The plans offered when `allow_installments` (the default when none were set: 3 monthly payments).' }),
    hosted_invoice_url: z.string().nullable().meta({ description: 'The hosted page where the customer sees and pays the invoice, once sent.' }),
    invoice_pdf: z.string().nullable().meta({ description: 'The PDF of the invoice, once sent.' }),
    finalized_at: nullableUnixTime('When it was finalized.'),
    sent_at: nullableUnixTime('When it was first sent.'),
    paid_at: nullableUnixTime('When it became PAID.'),
    voided_at: nullableUnixTime('When it became VOID.'),
    marked_uncollectible_at: nullableUnixTime('When it became UNCOLLECTIBLE.'),
    reminders: z
      .strictObject({
        count: z.number().int().meta({ description: 'Reminders sent.' }),
        last_sent_at: nullableUnixTime('When the last reminder went.'),
        next_at: nullableUnixTime('When the next reminder is due.'),
      })
      .meta({ description: 'The reminder emails of an unpaid invoice past its due date.' }),
    metadata: metadataObject(),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'invoice', description: 'A bill for line items, paid in full or in parts on its hosted page.' });
export type Invoice = z.infer<typeof InvoiceObject>;

/** The invoice object (README, "Invoices"); webhook payloads use this same function. */
export function presentInvoice(row: InvoiceRow, invoiceUrl: string): Invoice {
  return {
    id: row.id,
    object: 'invoice',
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
    allow_installments: row.allow_installments,
    installment_options: effectiveOptions(row.installment_options).map((o) => ({ count: o.count, interval: o.interval })),
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
