import { queueEmailBesides } from '../email/outbox.ts';
import { invoiceNumberOfPayment, paymentRecipient } from '../email/store.ts';
import { receiptEmail } from '../email/templates.ts';
import { ownerOf } from '../lib/owner.ts';
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
export const receiptParticipant: PaymentParticipant = {
  name: 'receipts',
  beforeCharge: () => Promise.resolve(null),
  async afterSuccess(tx, session, payment) {
    // The email typed on the page is on the row already: the lookup is for the other two (bench/email.ts).
    const to = payment.email?.trim() || (await paymentRecipient(tx.sql, payment.id));
    if (!to) return;
    const invoiceNumber = payment.invoice_id || session.invoice_id ? await invoiceNumberOfPayment(tx.sql, payment.id) : null;
    const receiptUrl = `${tx.s.config.checkoutUrl}/${session.id}/receipt`;
    await queueEmailBesides(tx, ownerOf(payment), {
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
          description: session.description ?? payment.description,
          // The session's items when they make up what was paid (a part payment of an invoice does not).
          lineItems: session.line_items && itemsTotal(session.line_items) === payment.amount_cents ? session.line_items : null,
          paidAt: payment.succeeded_at ?? payment.updated_at,
          card: payment.card_last4 ? { brand: payment.card_brand, last4: payment.card_last4 } : null,
          receiptUrl,
          invoiceNumber,
        }),
    });
  },
};
