import { queueEmailBesides } from '../email/outbox.ts';
import { invoiceNumberOfPayment, paymentRecipient } from '../email/store.ts';
import { receiptEmail } from '../email/templates.ts';
import { ownerOf } from '../lib/owner.ts';
import type { Tx } from '../db/tx.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { Services } from '../services.ts';
import type { PaymentParticipant } from './participants.ts';
import type { LineItem } from './schema.ts';

const itemsTotal = (items: readonly LineItem[]): number => items.reduce((sum, i) => sum + i.amount * i.quantity, 0);

/**
 * Queues the payment's receipt email in the transaction that records its success: to the email
 * typed on the page (recorded on the payment), else the session's customer_email, else the attached
 * customer's; none known, no receipt. One per payment (dedupe key `receipt:<payment id>`). The row
 * commits with the payment, the send job runs after commit: SMTP never delays or fails a payment.
 * The receipt shows the brand and last four only, never the card number or the customer's notes.
 */
/** What a receipt says beyond the payment itself. */
interface ReceiptExtras {
  description: string | null;
  lineItems: LineItem[] | null;
  /** The hosted receipt page; null for a payment without a session (a later part of a plan). */
  receiptUrl: string | null;
  invoiceNumber: string | null;
}

/** Queues the receipt of `payment` to its recipient (none known: no receipt), once per payment. */
async function queueReceipt(tx: Tx, s: Services, payment: PaymentRow, extras: ReceiptExtras): Promise<void> {
  // The email typed on the page is on the row already: the lookup is for the other two (bench/email.ts).
  const to = payment.email?.trim() || (await paymentRecipient(tx.sql, payment.id));
  if (!to) return;
  await queueEmailBesides(tx, s, ownerOf(payment), {
    to,
    template: 'receipt',
    relatedObject: payment.id,
    dedupeKey: `receipt:${payment.id}`,
    render: (merchant) =>
      receiptEmail({
        merchantName: merchant.name,
        paymentId: payment.id,
        amountCents: payment.amount_cents,
        currency: payment.currency,
        paidAt: payment.succeeded_at ?? payment.updated_at,
        card: payment.card_last4 ? { brand: payment.card_brand, last4: payment.card_last4 } : null,
        ...extras,
      }),
  });
}

export function receiptParticipant(s: Services): PaymentParticipant {
  return {
    name: 'receipts',
    beforeCharge: () => Promise.resolve(null),

    async afterSuccess(tx, session, payment) {
      await queueReceipt(tx, s, payment, {
        description: session.description ?? payment.description,
        // The session's items when they make up what was paid (a part payment of an invoice does not).
        lineItems: session.line_items && itemsTotal(session.line_items) === payment.amount_cents ? session.line_items : null,
        receiptUrl: `${s.config.checkoutUrl}/${session.id}/receipt`,
        invoiceNumber: payment.invoice_id || session.invoice_id ? await invoiceNumberOfPayment(tx.sql, payment.id) : null,
      });
    },

    /** A later part of an installment plan: its receipt, to the email on the payment (the plan's customer's, installments/store.ts planRecipient), with no receipt page (no session). */
    async afterOffSessionSuccess(tx, payment) {
      await queueReceipt(tx, s, payment, {
        description: payment.description,
        lineItems: null,
        receiptUrl: null,
        invoiceNumber: payment.invoice_id ? await invoiceNumberOfPayment(tx.sql, payment.id) : null,
      });
    },
  };
}
