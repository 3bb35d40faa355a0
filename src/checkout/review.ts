import type { Logger } from 'pino';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import { withTx } from '../db/tx.ts';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import { ownerOf, type Owner } from '../lib/owner.ts';
import { presentPayment } from '../payments/presenter.ts';
import * as payments from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { processorFor } from '../processor/select.ts';
import type { CaptureResult } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { recordAttemptFailure, succeed, type PayResult } from './settle.ts';
import * as store from './store.ts';

/** How long a decision may wait on the processor before the sweeper repeats its call. */
const DECISION_STALE_MS = 60_000;
const SWEEP_BATCH = 100;

export type ReviewDecision = 'approve' | 'refuse';

/** What the payer's failed payment says after a refusal (the merchant sees the review's outcome). */
const REFUSED_MESSAGE = 'The payment was not accepted by the merchant. Your card was not charged.';

/**
 * A person's decision on a payment held for review (docs/fraud.md), in three steps like a charge:
 * transaction 1 moves the review from open to approving or refusing (one decision wins: a second
 * one, or the sweeper's, finds it taken) with its audit record; the processor captures or voids the
 * authorisation with nothing open; transaction 2 records the outcome (closeReview).
 */
export async function decideReview(s: Services, o: Owner, paymentId: string, decision: ReviewDecision, actor: AuditActor, log: Logger): Promise<PaymentRow> {
  const taken = await withTx(s, log, async (tx) => {
    const row = await payments.startClosingReview(tx.sql, o, paymentId, decision === 'approve' ? 'approving' : 'refusing', actor.label);
    if (!row) {
      const p = await payments.findPayment(tx.sql, o, paymentId);
      if (!p) throw resourceMissing('payment', paymentId);
      throw new ApiError('resource_invalid_state', `This payment has no open review (its review is ${p.review_status ?? 'absent'}).`);
    }
    await recordAudit(tx.sql, { accountId: o.accountId, livemode: o.livemode, actor, action: decision === 'approve' ? 'payment.review_approved' : 'payment.review_refused', object: { type: 'payment', id: paymentId } });
    return row;
  });
  try {
    return await finishDecision(s, taken, 'refused', log);
  } catch (err) {
    // The processor did not answer: the decision stands (approving / refusing) and the
    // payment-reviews pass tells the processor within a few minutes.
    log.warn({ err, paymentId }, 'a review decision was recorded but the processor did not answer; the repair pass finishes it');
    return (await payments.findPayment(s.sql, o, paymentId))!;
  }
}

/** Asks the processor to capture or void, then records the outcome (both idempotent: the sweeper repeats them). */
async function finishDecision(s: Services, p: PaymentRow, refusal: 'refused' | 'expired', log: Logger): Promise<PaymentRow> {
  const processor = processorFor(s, p.livemode);
  if (!processor || !p.payment_intent_id) throw new Error(`payment ${p.id} held for review has no processor to decide it`);
  const answer = p.review_status === 'approving' ? await processor.capturePayment(p.payment_intent_id, p.id) : await processor.voidPayment(p.payment_intent_id, p.id);
  await closeReview(s, p, answer, refusal, log);
  return (await payments.findPayment(s.sql, ownerOf(p), p.id))!;
}

/**
 * Transaction 2: the review closes with its outcome and payment.review_closed. Approved and
 * captured: the payment succeeds as any other (session COMPLETE, payment.succeeded, the
 * participants). Refused, expired, or an authorisation the processor no longer holds: FAILED
 * with payment.failed. Under the session lock; a review already closed changes nothing.
 */
async function closeReview(s: Services, p: PaymentRow, answer: CaptureResult, refusal: 'refused' | 'expired', log: Logger): Promise<PayResult | null> {
  const o = ownerOf(p);
  return withTx(s, log, async (tx) => {
    const session = await store.lockSession(tx.sql, o, p.checkout_session_id!);
    if (!session) throw new Error(`checkout session ${p.checkout_session_id} vanished`);
    const current = await payments.lockInFlight(tx.sql, p.id);
    if (!current || (current.review_status !== 'approving' && current.review_status !== 'refusing')) return null;
    const approved = current.review_status === 'approving' && answer === 'captured';
    const outcome = approved ? 'approved' : current.review_status === 'approving' ? 'refused' : refusal;
    await payments.closeReview(tx.sql, p.id, outcome);
    let result: PayResult;
    if (approved) {
      result = await succeed(tx, s, session, { ...current, review_status: outcome }, null, log);
    } else {
      const code = answer === 'captured' ? 'review_capture_unexpected' : outcome === 'expired' ? 'review_expired' : 'review_refused';
      if (answer === 'captured') log.error({ paymentId: p.id }, 'a refused review was captured at the processor: refund it by hand');
      result = { kind: 'declined', session, payment: await recordAttemptFailure(tx, s, current, code, REFUSED_MESSAGE) };
    }
    const closed = (await payments.findPayment(tx.sql, o, p.id))!;
    await recordEvent(tx, s, o.accountId, 'payment.review_closed', presentPayment(closed, s.config.checkoutUrl));
    tx.afterCommit(() => s.metrics.reviewClosed(outcome, o.livemode));
    return result;
  });
}

/**
 * The review sweeper (a repair pass): open reviews past their deadline are refused (`expired`),
 * and decisions a crash left between their two transactions are finished by asking the processor
 * again. Safe with two workers: the open → refusing step and closeReview each have one winner.
 */
export async function sweepReviews(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'payment-reviews' });
  const due = await payments.reviewsDue(s.sql, new Date(Date.now() - DECISION_STALE_MS), SWEEP_BATCH);
  let closed = 0;
  for (const p of due) {
    try {
      let row: PaymentRow | undefined = p;
      if (p.review_status === 'open') {
        row = await withTx(s, log, async (tx) => {
          const taken = await payments.startClosingReview(tx.sql, ownerOf(p), p.id, 'refusing', 'deadline');
          if (taken) await recordAudit(tx.sql, { accountId: p.account_id, livemode: p.livemode, actor: { type: 'system', label: 'review deadline' }, action: 'payment.review_expired', object: { type: 'payment', id: p.id } });
          return taken;
        });
        if (!row) continue; // decided by a person meanwhile
      }
      await finishDecision(s, row, p.review_status === 'open' || p.review_closed_by === 'deadline' ? 'expired' : 'refused', log);
      closed++;
    } catch (err) {
      log.error({ err, paymentId: p.id }, 'could not close a payment review');
    }
  }
  return closed;
}
