import type { PaymentParticipant } from '../checkout/participants.ts';
import type { Tx } from '../db/tx.ts';
import { formatAmount } from '../lib/currency.ts';
import { ownerOf, type Owner } from '../lib/owner.ts';
import { isPlanChoice } from '../lib/installments.ts';
import { activePlanOfInvoice } from '../installments/store.ts';
import { invoiceAmountInFlight } from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { refundAutomatically } from '../refunds/automatic.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { presentInvoice } from './presenter.ts';
import { addPayment, lockInvoice, stopReminders, type InvoiceRow } from './store.ts';

export const INVOICE_PAID = 'This invoice is paid.';
export const INVOICE_VOID = 'This invoice was voided.';
export const INVOICE_CHANGED = 'The amount due on this invoice has changed. Open the invoice again to pay what is due.';
export const INVOICE_IN_PLAN = 'This invoice is being paid in installments: the rest is charged on the dates of the plan.';

/** The states in which an invoice takes payments. */
export const isPayable = (inv: InvoiceRow): boolean => inv.status === 'OPEN' || inv.status === 'UNCOLLECTIBLE';

/**
 * An invoice's amount due, held exactly across concurrent payments (DESIGN 8, like a link's
 * quantity_limit). beforeCharge locks the invoice row and checks the session's amount against
 * what is due less the attempts in flight of the invoice's other sessions: concurrent payers
 * queue on that lock, and the one whose amount no longer fits is refused uncharged. It runs
 * before the attempt is inserted (and before a 3-D Secure challenge completes, when the waiting
 * attempt is not in flight), and one session has at most one attempt in flight, so the attempts
 * of the asking session are left out of the count: an attempt never blocks itself. A declined
 * attempt leaves flight and frees its amount. afterSuccess adds the payment under the same lock;
 * the payment that brings the amount due to 0 makes the invoice PAID with `invoice.paid`, once.
 * The in-flight sweeper settles through the same recordOutcome, so a crash between charge and
 * record ends here too.
 */
export function invoicePaymentParticipant(s: Services): PaymentParticipant {
  return {
    name: 'invoices',

    async beforeCharge(tx, session) {
      if (!session.invoice_id) return null;
      const inv = await lockInvoice(tx.sql, ownerOf(session), session.invoice_id);
      if (!inv) return 'This invoice no longer exists.';
      if (inv.status === 'PAID') return INVOICE_PAID;
      if (inv.status === 'VOID') return INVOICE_VOID;
      if (!isPayable(inv)) return 'This invoice cannot be paid.';
      if (inv.currency !== session.currency) return INVOICE_CHANGED;
      // An ACTIVE plan holds the rest of the amount due: its parts were agreed and will be charged.
      if (await activePlanOfInvoice(tx.sql, inv.id)) return INVOICE_IN_PLAN;
      // The amount due is the invoice's own (afterSuccess adds each payment in the transaction that
      // records it), not a sum of payments: a charge refunded automatically never paid the invoice.
      const remaining = inv.amount_due_cents - (await invoiceAmountInFlight(tx.sql, inv.id, session.id));
      if (session.amount_cents > remaining) return INVOICE_CHANGED;
      // A plan's first part: the plan must pay exactly what is due (its parts are partial payments
      // the payer agreed to, whatever allow_partial_payments and minimum_payment_cents say).
      if (isPlanChoice(session.installment)) {
        if (!inv.allow_installments) return 'This invoice no longer offers installments. Open it again to pay what is due.';
        if (session.installment.total_cents !== remaining) return INVOICE_CHANGED;
      }
      return null;
    },

    async afterSuccess(tx, session, payment) {
      if (!session.invoice_id) return;
      await applyPayment(tx, s, session.invoice_id, ownerOf(session), payment);
      // A plan pays the rest on its dates: no reminder is sent meanwhile (nor after, should it default).
      if (payment.installment_plan_id) await stopReminders(tx.sql, session.invoice_id);
    },

    /** A later part of a plan paying the invoice: a part payment, `invoice.paid` with the last one. */
    async afterOffSessionSuccess(tx, payment) {
      if (!payment.invoice_id) return;
      await applyPayment(tx, s, payment.invoice_id, ownerOf(payment), payment);
    },
  };
}

/**
 * A successful payment of an invoice, in the transaction that records it. The money moved, so
 * nothing here throws for a payment that does not fit: beforeCharge makes that impossible while
 * the attempt is in flight, but should an invoice still be VOID or overpaid here, a VOID one is
 * refunded in full automatically (it accepts no payment), and an overpayment is capped at what
 * was due (the check constraint would refuse more) and logged as an error for the merchant to refund.
 */
async function applyPayment(tx: Tx, s: Services, invoiceId: string, o: Owner, payment: PaymentRow): Promise<void> {
  const log = s.log.child({ component: 'invoices', invoiceId, paymentId: payment.id });
  const inv = await lockInvoice(tx.sql, o, invoiceId);
  if (!inv) {
    log.error('a payment succeeded for an invoice that does not exist');
    return;
  }
  if (inv.status === 'VOID') {
    log.error('a payment succeeded on a VOID invoice: refunded automatically');
    await refundAutomatically(tx, s, payment, 'checkout_session_not_payable', log);
    return;
  }
  const applied = Math.min(payment.amount_cents, inv.amount_due_cents);
  if (applied < payment.amount_cents) {
    log.error(
      { amount: payment.amount_cents, due: inv.amount_due_cents, excess: formatAmount(payment.amount_cents - applied, payment.currency) },
      'a payment exceeded the amount due on its invoice: the excess is not counted and should be refunded',
    );
  }
  if (applied <= 0) return;
  const updated = await addPayment(tx.sql, inv.id, applied);
  const becamePaid = inv.status !== 'PAID' && updated.status === 'PAID';
  await recordEvent(tx, s, inv.account_id, becamePaid ? 'invoice.paid' : 'invoice.updated', presentInvoice(updated, s.config.invoiceUrl));
}
