import { randomBytes } from 'node:crypto';
import { checkCustomerRef } from '../customers/refs.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { queueEmail } from '../email/outbox.ts';
import { invoiceEmail } from '../email/templates.ts';
import { MAX_AMOUNT } from '../lib/currency.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';
import { mergeMetadata, metadataOnCreate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { scheduleReminder } from './jobs.ts';
import { invoiceEmailData, presentInvoice } from './presenter.ts';
import { firstReminderAt } from './reminders.ts';
import type { CreateInvoice, UpdateInvoice } from './schema.ts';
import * as store from './store.ts';
import type { InvoiceChanges, InvoiceLineItem, InvoiceRow } from './store.ts';

/** The unguessable key of the hosted page: 24 random bytes, base64url (32 characters, 192 bits). */
export const newHostedToken = (): string => randomBytes(24).toString('base64url');

/** `INV-0001`: four digits at least, more once the numbers need them. */
export const formatInvoiceNumber = (n: number): string => `INV-${String(n).padStart(4, '0')}`;

/** The sum of the lines, refused over MAX_AMOUNT (what one payment may charge). */
export function lineItemsTotal(items: readonly InvoiceLineItem[]): number {
  const total = items.reduce((sum, i) => sum + i.quantity * i.amount, 0);
  if (total > MAX_AMOUNT) throw invalidParam('line_items', `The line_items add up to ${total}, more than the maximum ${MAX_AMOUNT}.`);
  return total;
}

/** minimum_payment_cents means something only for an invoice that may be paid in parts. */
function checkPartial(allowPartial: boolean, minimum: number | null): void {
  if (minimum !== null && !allowPartial) {
    throw invalidParam('minimum_payment_cents', 'minimum_payment_cents applies only when allow_partial_payments is true (set it to null otherwise).');
  }
}

/** The 400 of a transition the invoice's status does not allow. */
export function invalidState(row: Pick<InvoiceRow, 'id' | 'status'>, action: string, allowed: string): ApiError {
  return new ApiError('resource_invalid_state', `Invoice ${row.id} is ${row.status}: only ${allowed} can be ${action}.`);
}

const present = (s: Services, row: InvoiceRow) => presentInvoice(row, s.config.invoiceUrl);

async function locked(tx: Tx, o: Owner, id: string): Promise<InvoiceRow> {
  const row = await store.lockInvoice(tx.sql, o, id);
  if (!row) throw resourceMissing('invoice', id);
  return row;
}

export async function createInvoice(s: Services, o: Owner, input: CreateInvoice): Promise<InvoiceRow> {
  const lineItems = input.line_items ?? [];
  const total = lineItemsTotal(lineItems);
  const allowPartial = input.allow_partial_payments ?? false;
  const minimum = input.minimum_payment_cents ?? null;
  checkPartial(allowPartial, minimum);
  return withTx(s, s.log, async (tx) => {
    await checkCustomerRef(tx.sql, o, input.customer_id);
    const row = await store.insertInvoice(tx.sql, o, {
      id: newId('in'),
      customer_id: input.customer_id,
      currency: input.currency,
      line_items: lineItems,
      total_cents: total,
      description: input.description ?? null,
      due_date: input.due_date != null ? new Date(input.due_date * 1000) : null,
      allow_partial_payments: allowPartial,
      minimum_payment_cents: minimum,
      allow_installments: input.allow_installments ?? false,
      installment_options: input.installment_options ?? null,
      hosted_token: newHostedToken(),
      metadata: metadataOnCreate(input.metadata),
    });
    await recordEvent(tx, s, o.accountId, 'invoice.created', present(s, row));
    return row;
  });
}

/** The changes a PATCH of a DRAFT makes (every writable field), or the 400 it gets. */
export function planUpdate(cur: InvoiceRow, patch: UpdateInvoice): InvoiceChanges {
  const c: InvoiceChanges = {};
  if (patch.customer_id !== undefined) c.customer_id = patch.customer_id;
  if (patch.currency !== undefined) c.currency = patch.currency;
  if (patch.line_items !== undefined) {
    c.line_items = patch.line_items;
    c.total_cents = lineItemsTotal(patch.line_items);
  }
  if (patch.description !== undefined) c.description = patch.description;
  if (patch.due_date !== undefined) c.due_date = patch.due_date === null ? null : new Date(patch.due_date * 1000);
  if (patch.allow_partial_payments !== undefined) c.allow_partial_payments = patch.allow_partial_payments;
  if (patch.minimum_payment_cents !== undefined) c.minimum_payment_cents = patch.minimum_payment_cents;
  if (patch.allow_installments !== undefined) c.allow_installments = patch.allow_installments;
  if (patch.installment_options !== undefined) c.installment_options = patch.installment_options;
  if (patch.metadata !== undefined) c.metadata = mergeMetadata(cur.metadata, patch.metadata);
  checkPartial(c.allow_partial_payments ?? cur.allow_partial_payments, c.minimum_payment_cents !== undefined ? c.minimum_payment_cents : cur.minimum_payment_cents);
  return c;
}

export async function updateInvoice(s: Services, o: Owner, id: string, patch: UpdateInvoice): Promise<InvoiceRow> {
  return withTx(s, s.log, async (tx) => {
    const cur = await locked(tx, o, id);
    if (cur.status !== 'DRAFT') throw invalidState(cur, 'edited', 'DRAFT invoices');
    const changes = planUpdate(cur, patch);
    if (Object.keys(changes).length === 0) return cur;
    if (changes.customer_id !== undefined) await checkCustomerRef(tx.sql, o, changes.customer_id);
    const row = await store.updateInvoice(tx.sql, id, changes);
    await recordEvent(tx, s, o.accountId, 'invoice.updated', present(s, row));
    return row;
  });
}

/** Deletes a DRAFT; answers it as it was (the invoice.deleted event carries it). */
export async function deleteInvoice(s: Services, o: Owner, id: string): Promise<InvoiceRow> {
  return withTx(s, s.log, async (tx) => {
    const cur = await locked(tx, o, id);
    if (cur.status !== 'DRAFT') throw invalidState(cur, 'deleted', 'DRAFT invoices');
    await store.deleteDraft(tx.sql, id);
    await recordEvent(tx, s, o.accountId, 'invoice.deleted', present(s, cur));
    return cur;
  });
}

/**
 * DRAFT to OPEN inside the caller's transaction (which holds the row lock): it needs a line and a
 * positive total, and a minimum payment within the total; it takes the next number of the
 * account and mode (nextInvoiceNumber: a rollback gives the number back, so no gap).
 */
async function finalizeInTx(tx: Tx, s: Services, o: Owner, cur: InvoiceRow): Promise<InvoiceRow> {
  if (cur.line_items.length === 0) throw invalidParam('line_items', 'An invoice needs at least one line item to be finalized.');
  if (cur.total_cents <= 0) throw invalidParam('line_items', 'The line_items of an invoice must add up to a positive total to be finalized.');
  if (cur.minimum_payment_cents !== null && cur.minimum_payment_cents > cur.total_cents) {
    throw invalidParam('minimum_payment_cents', `minimum_payment_cents (${cur.minimum_payment_cents}) is more than the invoice's total (${cur.total_cents}).`);
  }
  const number = formatInvoiceNumber(await store.nextInvoiceNumber(tx.sql, o));
  const row = await store.markFinalized(tx.sql, cur.id, number);
  await recordEvent(tx, s, o.accountId, 'invoice.finalized', present(s, row));
  return row;
}

export async function finalizeInvoice(s: Services, o: Owner, id: string): Promise<InvoiceRow> {
  return withTx(s, s.log, async (tx) => {
    const cur = await locked(tx, o, id);
    if (cur.status !== 'DRAFT') throw invalidState(cur, 'finalized', 'DRAFT invoices');
    return finalizeInTx(tx, s, o, cur);
  });
}

/**
 * Emails the invoice to its customer, finalizing a DRAFT first (one transaction: a send that fails
 * leaves the invoice a DRAFT and gives its number back). OPEN or UNCOLLECTIBLE only. The first send
 * sets sent_at (the hosted page goes live), plans the reminders and fires invoice.sent; a later
 * send emails it again and fires nothing (invoice.sent is delivered once per invoice).
 */
export async function sendInvoice(s: Services, o: Owner, id: string): Promise<InvoiceRow> {
  return withTx(s, s.log, async (tx) => {
    let cur = await locked(tx, o, id);
    if (cur.status === 'DRAFT') cur = await finalizeInTx(tx, s, o, cur);
    if (cur.status !== 'OPEN' && cur.status !== 'UNCOLLECTIBLE') throw invalidState(cur, 'sent', 'OPEN or UNCOLLECTIBLE invoices');
    const to = await store.billedCustomerEmail(tx.sql, o, cur.customer_id);
    if (!to) throw new ApiError('resource_invalid_state', `The customer of invoice ${cur.id} (${cur.customer_id}) no longer exists: there is nobody to send it to.`, 'customer_id');
    const first = cur.sent_at === null;
    // Reminders are planned for an OPEN invoice only: an UNCOLLECTIBLE one is never reminded.
    const now = new Date();
    const plan = first && cur.status === 'OPEN' ? firstReminderAt(now, cur.due_date, s.config.invoiceReminders) : null;
    const row = await store.markSent(tx.sql, cur.id, now, plan);
    await queueEmail(tx, s, o, {
      to,
      template: 'invoice',
      render: (m) => invoiceEmail(invoiceEmailData(row, m.name, s.config.invoiceUrl)),
      relatedObject: row.id,
    });
    if (first) {
      await recordEvent(tx, s, o.accountId, 'invoice.sent', present(s, row));
      if (row.next_reminder_at) tx.afterCommit(() => scheduleReminder(s, row));
    }
    return row;
  });
}

/**
 * OPEN or UNCOLLECTIBLE to VOID: it then accepts no payment. Refused while a payment of the
 * invoice is at the processor (the row lock is taken first, so every attempt committed before it
 * is counted, and none can start until this commits) and once anything was paid: a partly paid
 * invoice is marked uncollectible instead.
 */
export async function voidInvoice(s: Services, o: Owner, id: string): Promise<InvoiceRow> {
  return withTx(s, s.log, async (tx) => {
    const cur = await locked(tx, o, id);
    if (cur.status !== 'OPEN' && cur.status !== 'UNCOLLECTIBLE') throw invalidState(cur, 'voided', 'OPEN or UNCOLLECTIBLE invoices');
    if ((await store.paymentsInFlight(tx.sql, id)) > 0) {
      throw new ApiError('resource_invalid_state', `A payment of invoice ${id} is in progress: it can be voided once that payment has ended.`);
    }
    if (cur.amount_paid_cents > 0) {
      throw new ApiError('resource_invalid_state', `Invoice ${id} is partly paid (${cur.amount_paid_cents} of ${cur.total_cents}): it cannot be voided; mark it uncollectible instead.`);
    }
    const row = await store.markClosed(tx.sql, id, 'VOID');
    await recordEvent(tx, s, o.accountId, 'invoice.voided', present(s, row));
    return row;
  });
}

/** OPEN to UNCOLLECTIBLE: reminders stop; the invoice can still be paid (as in Stripe). */
export async function markUncollectible(s: Services, o: Owner, id: string): Promise<InvoiceRow> {
  return withTx(s, s.log, async (tx) => {
    const cur = await locked(tx, o, id);
    if (cur.status !== 'OPEN') throw invalidState(cur, 'marked uncollectible', 'OPEN invoices');
    const row = await store.markClosed(tx.sql, id, 'UNCOLLECTIBLE');
    await recordEvent(tx, s, o.accountId, 'invoice.marked_uncollectible', present(s, row));
    return row;
  });
}

export async function getInvoice(s: Services, o: Owner, id: string): Promise<InvoiceRow> {
  const row = await store.findInvoice(s.sql, o, id);
  if (!row) throw resourceMissing('invoice', id);
  return row;
}
