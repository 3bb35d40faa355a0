import type { PaymentParticipant } from '../checkout/participants.ts';
import { linkPlacesTaken } from '../payments/store.ts';
import { enqueuePaymentCount } from './jobs.ts';
import { closedReason, paymentLimit } from './service.ts';
import * as store from './store.ts';
import { ownerOf } from '../lib/owner.ts';
import { isPlanChoice } from '../lib/installments.ts';
import type { Services } from '../services.ts';

/**
 * quantity_limit and SINGLE held exactly (DESIGN 8): the transaction that records an attempt
 * locks the link row and counts the places taken (SUCCEEDED payments plus attempts in flight,
 * which reserve theirs while the processor is called with no lock held), never the asynchronous
 * counters. Concurrent payers queue on that lock; the one who finds every place taken is refused
 * uncharged; a declined attempt frees its place; the payment that reaches the limit marks the
 * link COMPLETED in the transaction that records its success. An installment plan takes one place
 * (its first part); its later parts take none and only add to the amount collected. Listed in the composition root
 * (src/compose.ts), so it takes part whether or not the process mounts the link pages.
 */
export function linkPaymentParticipant(s: Services): PaymentParticipant {
  return {
    name: 'payment-links',

    async beforeCharge(tx, session) {
      if (!session.payment_link_id) return null;
      const link = await store.lockLink(tx.sql, ownerOf(session), session.payment_link_id);
      if (!link) return 'This payment link no longer exists.';
      const closed = closedReason(link, await linkPlacesTaken(tx.sql, link.id));
      if (closed) return closed.message;
      // The first part of an installment plan is charged for the link's price split in parts: the
      // plan's total is what must still be the link's price.
      const plan = isPlanChoice(session.installment) ? session.installment : null;
      if ((plan ? plan.total_cents : session.amount_cents) !== link.amount_cents || link.currency !== session.currency) {
        return 'The price on this payment link has changed. Open the link again to pay the current price.';
      }
      if (plan && !link.installment_enabled) return 'This payment link no longer offers installments. Open the link again to pay in full.';
      return null;
    },

    async afterSuccess(tx, session, payment) {
      if (!session.payment_link_id) return;
      const o = ownerOf(session);
      const link = await store.lockLink(tx.sql, o, session.payment_link_id);
      if (!link) return;
      const limit = paymentLimit(link.type, link.quantity_limit);
      if (link.status === 'ACTIVE' && limit !== null && (await store.succeededPayments(tx.sql, link.id)) >= limit) {
        await store.updateLink(tx.sql, link.id, { status: 'COMPLETED' });
      }
      tx.afterCommit(() => enqueuePaymentCount(s.queues, payment.id));
    },

    /**
     * A later part of a plan on the link: it adds to total_collected_cents (and the source's
     * analytics) through the same counter job, but is no new payment and takes no place: a plan
     * counts once, with its first part (counters.ts, linkPlacesTaken).
     */
    async afterOffSessionSuccess(tx, payment) {
      if (!payment.payment_link_id) return;
      tx.afterCommit(() => enqueuePaymentCount(s.queues, payment.id));
    },
  };
}
