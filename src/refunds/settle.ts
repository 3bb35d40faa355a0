import type { Logger } from 'pino';
import { withTx, type Tx } from '../db/tx.ts';
import { queueEmailBesides } from '../email/outbox.ts';
import { paymentRecipient } from '../email/store.ts';
import { refundNoticeEmail } from '../email/templates.ts';
import { ownerOf } from '../lib/owner.ts';
import { presentPayment } from '../payments/presenter.ts';
import * as payments from '../payments/store.ts';
import { requireProcessor } from '../processor/select.ts';
import type { RefundLookup, RefundResult } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { scheduleRefundSettle } from './jobs.ts';
import { presentRefund } from './presenter.ts';
import * as store from './store.ts';
import type { RefundRow } from './store.ts';

/**
 * How long a refund may stay PENDING before the sweeper asks the processor about it itself: far
 * longer than the settle job needs (a test-mode refund settles within a second), so the sweeper
 * only takes over what a lost job or a crash before the processor call left behind.
 */
export const SETTLE_PENDING_REFUNDS_AFTER_MS = 60_000;
const SWEEP_BATCH = 200;

/**
 * Transaction 2: records the processor's answer for a PENDING refund. SUCCEEDED adds the amount to
 * the payment (whose row is locked first, in the order transaction 1 takes its locks) with
 * `refund.updated` and `payment.refunded`; FAILED and CANCELLED record `refund.updated`. A refund
 * no longer PENDING is left as it is: whoever recorded first won. `pending` changes nothing.
 */
export async function recordRefundOutcome(s: Services, refund: RefundRow, result: RefundResult, log: Logger): Promise<RefundRow> {
  if (result.status === 'pending') return refund;
  return withTx(s, log, async (tx) => {
    const o = ownerOf(refund);
    if (result.status === 'succeeded') {
      const payment = await payments.lockPayment(tx.sql, o, refund.payment_id);
      const done = await store.settle(tx.sql, refund.id, 'SUCCEEDED');
      if (!payment || !done) return (await store.findRefundById(tx.sql, refund.id))!;
      const updated = await payments.addRefunded(tx.sql, payment.id, done.amount_cents);
      await recordEvent(tx, s, o.accountId, 'refund.updated', presentRefund(done));
      await recordEvent(tx, s, o.accountId, 'payment.refunded', presentPayment(updated, s.config.checkoutUrl));
      await queueRefundNotice(tx, s, updated, done);
      return done;
    }
    const done = result.status === 'failed'
      ? await store.settle(tx.sql, refund.id, 'FAILED', result.reason)
      : await store.settle(tx.sql, refund.id, 'CANCELLED');
    if (!done) return (await store.findRefundById(tx.sql, refund.id))!;
    await recordEvent(tx, s, o.accountId, 'refund.updated', presentRefund(done));
    return done;
  });
}

/**
 * The payer's refund notice, queued with the refund's success (same recipient rule as the receipt:
 * src/email/store.ts paymentRecipient). One per refund; none when no email is known. A failure to
 * queue it never undoes the refund (queueEmailBesides).
 */
async function queueRefundNotice(tx: Tx, s: Services, payment: payments.PaymentRow, refund: RefundRow): Promise<void> {
  const to = await paymentRecipient(tx.sql, payment.id);
  if (!to) return;
  const { checkoutUrl } = s.config;
  await queueEmailBesides(tx, s, ownerOf(refund), {
    to,
    template: 'refund_notice',
    relatedObject: refund.id,
    dedupeKey: `refund_notice:${refund.id}`,
    render: (merchant) =>
      refundNoticeEmail({
        merchantName: merchant.name,
        refundId: refund.id,
        paymentId: payment.id,
        amountCents: refund.amount_cents,
        paymentAmountCents: payment.amount_cents,
        totalRefundedCents: payment.amount_refunded_cents,
        currency: refund.currency,
        refundedAt: refund.updated_at,
        card: payment.card_last4 ? { brand: payment.card_brand, last4: payment.card_last4 } : null,
        receiptUrl: payment.checkout_session_id ? `${checkoutUrl}/${payment.checkout_session_id}/receipt` : null,
      }),
  });
}

/**
 * Asks the processor what became of a refund. One it never saw (a crash between transaction 1
 * and the call) is asked for again: the merchant's request was accepted and its amount reserved,
 * and createRefund is idempotent by our refund id, so a call that did arrive is not repeated.
 */
export async function askProcessor(s: Services, refund: RefundRow): Promise<RefundResult> {
  const payment = await payments.findPayment(s.sql, ownerOf(refund), refund.payment_id);
  const found: RefundLookup = await requireProcessor(s, refund.livemode).retrieveRefund(refund.id, payment?.payment_intent_id ?? null);
  if (found.status !== 'not_found') return found;
  return callCreate(s, refund);
}

/** The processor call of a committed refund (the first one, or a retry after a crash). */
export async function callCreate(s: Services, refund: RefundRow): Promise<RefundResult> {
  const payment = await payments.findPayment(s.sql, ownerOf(refund), refund.payment_id);
  if (!payment?.payment_intent_id) return { status: 'failed', reason: 'charge_not_found' };
  return requireProcessor(s, refund.livemode).createRefund({
    reference: refund.id,
    intentId: payment.payment_intent_id,
    attempt: payment.id,
    amount: refund.amount_cents,
    currency: refund.currency,
  });
}

/**
 * The settle job (workers/refunds.ts): asks the processor again and records a final answer. Still
 * pending is thrown, so BullMQ asks again a second later; the sweeper takes over after that.
 */
export async function settleRefundJob(s: Services, refundId: string): Promise<string> {
  const refund = await store.findRefundById(s.sql, refundId);
  if (!refund || refund.status !== 'PENDING') return refund ? refund.status : 'missing';
  const log = s.log.child({ job: refundId });
  const result = await askProcessor(s, refund);
  if (result.status === 'pending') throw new Error(`refund ${refundId} is still pending at the processor`);
  return (await recordRefundOutcome(s, refund, result, log)).status;
}

/**
 * The sweeper (`refunds-pending` in the reconcile pass): refunds PENDING for longer than
 * SETTLE_PENDING_REFUNDS_AFTER_MS, because their job was lost (a Redis flush) or a crash came
 * before or after the processor call, are settled by asking the processor; one still pending
 * there gets its job back. Safe with two workers: only a PENDING refund changes, under its lock.
 */
export async function settleStuckRefunds(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'refunds-pending' });
  const stuck = await store.stuckPending(s.sql, new Date(Date.now() - SETTLE_PENDING_REFUNDS_AFTER_MS), SWEEP_BATCH);
  let settled = 0;
  for (const r of stuck) {
    try {
      const result = await askProcessor(s, r);
      if (result.status === 'pending') {
        await scheduleRefundSettle(s, r);
        continue;
      }
      const done = await recordRefundOutcome(s, r, result, log);
      settled++;
      log.warn({ refundId: r.id, paymentId: r.payment_id, processor: result.status, status: done.status }, 'settled a refund left pending');
    } catch (err) {
      log.error({ err, refundId: r.id }, 'could not settle a refund left pending');
    }
  }
  return settled;
}
