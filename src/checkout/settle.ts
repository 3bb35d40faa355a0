import type { Logger } from 'pino';
import { withTx, type Tx } from '../db/tx.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { ownerOf } from '../lib/owner.ts';
import { presentPayment } from '../payments/presenter.ts';
import * as payments from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { newId } from '../lib/ids.ts';
import { processorFor } from '../processor/select.ts';
import type { AttemptLookup } from '../processor/types.ts';
import { refundAutomatically } from '../refunds/automatic.ts';
import type { Services } from '../services.ts';
import { expireInTx } from './expiry.ts';
import { isPlanChoice } from '../lib/installments.ts';
import { presentSession } from './presenter.ts';
import * as store from './store.ts';
import type { SessionRow } from './store.ts';

export type PayResult =
  | { kind: 'succeeded'; session: SessionRow; payment: PaymentRow }
  | { kind: 'declined'; session: SessionRow; payment: PaymentRow }
  | { kind: 'requires_action'; session: SessionRow; payment: PaymentRow }
  | { kind: 'refused'; session: SessionRow; message: string }
  | { kind: 'ended'; session: SessionRow }
  | { kind: 'no_challenge'; session: SessionRow }
  /** Another attempt of the session is with the processor, or ours has no recorded answer yet. */
  | { kind: 'in_progress'; session: SessionRow }
  /** Authorised and held for a person's review (a fraud rule's `review`: docs/fraud.md). */
  | { kind: 'in_review'; session: SessionRow; payment: PaymentRow };

/**
 * How long an attempt may stay in flight before the sweeper asks the processor about it. Longer
 * than any processor call may take (a real processor's client must time out well before this), so
 * the sweeper never races a request still waiting on its answer.
 */
export const SETTLE_IN_FLIGHT_AFTER_MS = 60_000;
const SWEEP_BATCH = 200;

/** What the payer is told when the processor never saw the attempt (a crash before the call). */
const NOT_CHARGED = 'The payment could not be completed and your card was not charged. Please try again.';

export async function failPending(tx: Tx, s: Services, session: SessionRow, code: string, message: string): Promise<void> {
  for (const p of await payments.failAbandoned(tx.sql, ownerOf(session), session.id, code, message)) {
    await recordEvent(tx, s, session.account_id, 'payment.failed', presentPayment(p, s.config.checkoutUrl));
  }
}

export async function recordAttemptFailure(tx: Tx, s: Services, attempt: PaymentRow, code: string, message: string): Promise<PaymentRow> {
  const payment = await payments.markFailed(tx.sql, ownerOf(attempt), attempt.id, code, message);
  await recordEvent(tx, s, attempt.account_id, 'payment.failed', presentPayment(payment, s.config.checkoutUrl));
  return payment;
}

type Card = { brand: string; last4: string; fingerprint?: string | null; country?: string | null } | null | undefined;

/** What a success records besides the card: the card the processor kept, and the plan a first part starts. */
function successDetails(session: SessionRow, result: { paymentMethod?: string | null; customerId?: string | null }): payments.SuccessDetails {
  const plan = isPlanChoice(session.installment) ? session.installment : null;
  return { paymentMethod: result.paymentMethod ?? null, installmentPlanId: plan?.plan_id ?? null, installmentNumber: plan ? 1 : null, customerId: result.customerId ?? null };
}

/** The customer a successful payment of a session without one belongs to: the first participant's answer (PaymentParticipant.customerOf). */
async function customerOfSuccess(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow): Promise<string | null> {
  if (session.customer_id) return null;
  for (const participant of s.paymentParticipants) {
    const id = (await participant.customerOf?.(tx, session, attempt)) ?? null;
    if (id) return id;
  }
  return null;
}

/** The first participant's refusal of a charge (s.paymentParticipants); null when all agree. */
async function refusalOf(tx: Tx, s: Services, session: SessionRow): Promise<string | null> {
  for (const participant of s.paymentParticipants) {
    const why = await participant.beforeCharge(tx, session);
    if (why) return why;
  }
  return null;
}

/**
 * A charge that cannot complete its session: the session expired (Stripe charged an intent after
 * expiry, its cancel lost the race or failed) or a participant refuses it now. Recorded as it is,
 * SUCCEEDED with `payment.succeeded` (money moved), and refunded automatically in the same commit.
 */
async function keepAndRefund(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow, card: Card, log: Logger): Promise<PayResult> {
  const payment = await payments.markSucceeded(tx.sql, ownerOf(session), attempt.id, card ?? null);
  tx.afterCommit(() => s.metrics.paymentSucceeded(payment));
  await recordEvent(tx, s, session.account_id, 'payment.succeeded', presentPayment(payment, s.config.checkoutUrl));
  const cause = session.status === 'OPEN' ? 'checkout_session_not_payable' : 'checkout_session_expired';
  await refundAutomatically(tx, s, payment, cause, log);
  return { kind: 'ended', session };
}

/**
 * A charge of the session's intent with no attempt in flight for it (Stripe: the payer confirmed
 * again after an attempt was recorded declined, or after the session expired). One intent is
 * charged at most once, so a SUCCEEDED payment of it means this was recorded already. Otherwise a
 * payment is recorded for the charge: it completes the session when that is still OPEN and the
 * participants agree, else it is refunded (keepAndRefund). The caller holds the session lock.
 */
async function recordLateCharge(tx: Tx, s: Services, session: SessionRow, intentId: string, card: Card, log: Logger, paymentMethod: string | null = null): Promise<PayResult> {
  const o = ownerOf(session);
  const recorded = await payments.succeededOfIntent(tx.sql, o, intentId);
  if (recorded) return alreadyRecorded(session, recorded);
  // Asked before the insert: a link's places taken count attempts in flight, this one included.
  const payable = session.status === 'OPEN' && !(await refusalOf(tx, s, session));
  const last = await payments.latestOfIntent(tx.sql, o, intentId);
  const attempt = await payments.insertPayment(tx.sql, o, {
    id: newId('pay'),
    amount_cents: session.amount_cents,
    currency: session.currency,
    checkout_session_id: session.id,
    payment_intent_id: intentId,
    customer_id: session.customer_id,
    email: last?.email ?? null,
    billing_name: last?.billing_name ?? null,
    card_brand: card?.brand ?? null,
    card_last4: card?.last4 ?? null,
    description: session.description,
    payment_link_id: session.payment_link_id,
    link_source: session.link_source,
    invoice_id: session.invoice_id,
  });
  log.warn({ paymentId: attempt.id, sessionId: session.id, status: session.status }, 'the processor charged the session with no attempt in flight: recorded');
  if (payable) return succeed(tx, s, session, attempt, card, log, paymentMethod);
  return keepAndRefund(tx, s, session, attempt, card, log);
}

/**
 * The winning outcome: payment SUCCEEDED, session COMPLETE and paid, both events, the payment
 * participants, in one transaction. The first part of an installment plan carries the plan's id
 * (minted when the payer chose it) in its payment.succeeded already: the installments participant
 * creates the plan with it, in this same transaction.
 */
export async function succeed(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow, card: Card, log: Logger, paymentMethod: string | null = null): Promise<PayResult> {
  const o = ownerOf(session);
  // Expiry leaves a session with an attempt in flight alone, so the session is OPEN here; should
  // it not be, the money moved all the same: recorded and refunded, never thrown away.
  if (session.status !== 'OPEN') return keepAndRefund(tx, s, session, attempt, card, log);
  const customerId = await customerOfSuccess(tx, s, session, attempt);
  const payment = await payments.markSucceeded(tx.sql, o, attempt.id, card ?? null, successDetails(session, { paymentMethod, customerId }));
  const completed = await store.markComplete(tx.sql, o, session.id, payment.id, customerId);
  tx.afterCommit(() => (s.metrics.paymentSucceeded(payment), s.metrics.checkoutSessions('paid', o.livemode)));
  await recordEvent(tx, s, o.accountId, 'checkout.session.completed', presentSession(completed, s.config.checkoutUrl));
  await recordEvent(tx, s, o.accountId, 'payment.succeeded', presentPayment(payment, s.config.checkoutUrl));
  await failPending(tx, s, completed, 'authentication_abandoned', 'Another attempt paid the checkout session before this one was finished.');
  for (const participant of s.paymentParticipants) await participant.afterSuccess(tx, completed, payment);
  return { kind: 'succeeded', session: completed, payment };
}

/**
 * An attempt a `review` rule marked, authorised by the processor (not captured): held, still in
 * flight so that its session takes no other attempt and does not expire under it, with
 * payment.review_opened in the same commit. A person approves or refuses it before the deadline
 * (FRAUD_REVIEW_HOURS), after which the review sweeper refuses it (src/checkout/review.ts).
 */
async function holdForReview(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow, card: Card): Promise<PayResult> {
  const payment = await payments.markHeld(tx.sql, attempt.id, new Date(Date.now() + s.config.fraudReviewMs), card ?? null);
  await recordEvent(tx, s, session.account_id, 'payment.review_opened', presentPayment(payment, s.config.checkoutUrl));
  return { kind: 'in_review', session, payment };
}

/** An answer recorded earlier (by the request or the sweeper, whichever came first), as a result. */
function alreadyRecorded(session: SessionRow, payment: PaymentRow | undefined): PayResult {
  if (!payment || session.status !== 'OPEN') {
    return payment?.status === 'SUCCEEDED' ? { kind: 'succeeded', session, payment } : { kind: 'ended', session };
  }
  if (payment.status === 'FAILED') return { kind: 'declined', session, payment };
  if (payment.status === 'PENDING' && payment.next_action && !payment.processing_since) return { kind: 'requires_action', session, payment };
  return { kind: 'in_progress', session };
}

/**
 * Transaction 2: records the processor's answer for an attempt in flight, under the session lock,
 * and clears the in-flight mark. Idempotent: when the attempt is no longer in flight (the request
 * and the sweeper both got an answer), the one that comes second changes nothing. A session whose
 * expires_at passed while it waited is expired once a non-paying answer is recorded.
 */
export async function recordOutcome(s: Services, attempt: PaymentRow, result: AttemptLookup, log: Logger): Promise<PayResult> {
  const o = ownerOf(attempt);
  return withTx(s, log, async (tx): Promise<PayResult> => {
    const session = await store.lockSession(tx.sql, o, attempt.checkout_session_id!);
    if (!session) throw new Error(`checkout session ${attempt.checkout_session_id} vanished`);
    const current = await payments.lockInFlight(tx.sql, attempt.id);
    if (!current) {
      const recorded = await payments.findPayment(tx.sql, o, attempt.id);
      if (result.status === 'succeeded' && recorded?.status !== 'SUCCEEDED' && attempt.payment_intent_id) {
        // Charged after this attempt was recorded otherwise (Stripe: a confirmation the payer retried in the browser).
        return recordLateCharge(tx, s, session, attempt.payment_intent_id, result.card, log, result.paymentMethod ?? null);
      }
      return alreadyRecorded(session, recorded);
    }
    // Held for review already: only the review's decision (src/checkout/review.ts) moves it on.
    if (current.review_status) return { kind: 'in_review', session, payment: current };
    // No final answer yet (Stripe: processing, or 3-D Secure in the payer's browser): left in flight.
    if (result.status === 'processing') return { kind: 'in_progress', session };
    if (result.status === 'succeeded' && current.fraud_action === 'review') return holdForReview(tx, s, session, current, result.card);
    if (result.status === 'succeeded') return succeed(tx, s, session, current, result.card, log, result.paymentMethod ?? null);
    let answer: PayResult;
    if (result.status === 'requires_action') {
      answer = { kind: 'requires_action', session, payment: await payments.markRequiresAction(tx.sql, o, current.id) };
    } else if (result.status === 'declined') {
      answer = { kind: 'declined', session, payment: await recordAttemptFailure(tx, s, current, result.code, result.message) };
    } else {
      answer = { kind: 'declined', session, payment: await recordAttemptFailure(tx, s, current, 'processing_error', NOT_CHARGED) };
    }
    if (session.status === 'OPEN' && session.expires_at.getTime() <= Date.now()) {
      const expired = await expireInTx(tx, s, o, session.id, new Date());
      if (expired) return { kind: 'ended', session: expired };
    }
    return answer;
  });
}

/**
 * Calls the processor for an attempt committed in flight, with no transaction open, then records
 * the answer. A call that fails (timeout, connection lost) leaves the attempt in flight: its
 * outcome is unknown, so only the sweeper, asking the processor again, may settle it.
 */
export async function callAndRecord(
  s: Services,
  session: SessionRow,
  attempt: PaymentRow,
  log: Logger,
  call: () => Promise<AttemptLookup>,
): Promise<PayResult> {
  let result: AttemptLookup;
  try {
    result = await call();
  } catch (err) {
    log.error({ err, paymentId: attempt.id }, 'processor call failed; the payment stays in flight until the sweeper settles it');
    return { kind: 'in_progress', session };
  }
  return recordOutcome(s, attempt, result, log);
}

async function pastExpiry(s: Services, p: PaymentRow): Promise<boolean> {
  const session = p.checkout_session_id ? await store.findSession(s.sql, ownerOf(p), p.checkout_session_id) : undefined;
  return !!session && session.expires_at.getTime() <= Date.now();
}

/**
 * What the processor says of an intent (its event, or an answer about it) recorded for its
 * session: the attempt in flight on it gets the answer (recordOutcome); a charge with none in
 * flight is recorded late (recordLateCharge: the session completes, or the charge is refunded).
 * Anything else changes nothing. Idempotent, under the session lock, as recordOutcome.
 */
export async function recordIntentOutcome(s: Services, intentId: string, livemode: boolean, result: AttemptLookup, log: Logger): Promise<PayResult | null> {
  const row = await store.findSessionByIntent(s.sql, intentId, livemode);
  if (!row) {
    log.warn({ intentId }, 'the processor reports an intent of no checkout session');
    return null;
  }
  const o = ownerOf(row);
  const attempt = await payments.inFlightOfIntent(s.sql, o, row.id, intentId);
  if (attempt && result.status === 'declined' && result.charge && result.charge === attempt.processor_prior_charge) {
    // A decline of the charge before this attempt (an earlier press, reported late): not this
    // attempt's outcome. Its own answer comes with the payer's return, a later event or the sweeper.
    log.info({ paymentId: attempt.id, charge: result.charge }, 'a decline of an earlier confirmation: left for the attempt in flight');
    return null;
  }
  if (attempt) return recordOutcome(s, attempt, result, log);
  if (result.status !== 'succeeded') return null;
  return withTx(s, log, async (tx) => {
    const session = await store.lockSession(tx.sql, o, row.id);
    if (!session) throw new Error(`checkout session ${row.id} vanished`);
    // Started in flight meanwhile (the page's prepare): that attempt takes the charge.
    const inFlight = await payments.inFlightOfIntent(tx.sql, o, row.id, intentId);
    if (inFlight) {
      const current = await payments.lockInFlight(tx.sql, inFlight.id);
      if (current) return succeed(tx, s, session, current, result.card, log, result.paymentMethod ?? null);
    }
    return recordLateCharge(tx, s, session, intentId, result.card, log, result.paymentMethod ?? null);
  });
}

/**
 * The sweeper (run by the reconcile pass): attempts left in flight for longer than
 * SETTLE_IN_FLIGHT_AFTER_MS, by a crash between the processor call and transaction 2, are settled
 * by asking the processor again (idempotent by our payment id): charged ones complete their
 * session with both events and the payment participants; declined or never seen ones fail with payment.failed.
 * Safe with two workers: recordOutcome changes only an attempt still in flight, under its lock.
 */
export async function settleStuckPayments(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'payments-in-flight' });
  const stuck = await payments.stuckInFlight(s.sql, new Date(Date.now() - SETTLE_IN_FLIGHT_AFTER_MS), SWEEP_BATCH);
  let settled = 0;
  for (const p of stuck) {
    try {
      const processor = processorFor(s, p.livemode);
      if (!processor) continue; // live payments turned off since: left until live keys are back
      let result: AttemptLookup = p.payment_intent_id
        ? await processor.retrieveAttempt(p.payment_intent_id, p.id)
        : { status: 'not_found' };
      if (result.status === 'processing' && p.payment_intent_id && (await pastExpiry(s, p))) {
        // A challenge the payer walked away from would hold the session OPEN for ever: once the
        // session is past expires_at the intent is cancelled, unless it was charged meanwhile.
        await processor.cancelPaymentIntent(p.payment_intent_id);
        result = await processor.retrieveAttempt(p.payment_intent_id, p.id);
      }
      if (result.status === 'processing') continue; // still with the processor: asked again next pass
      const outcome = await recordOutcome(s, p, result, log);
      settled++;
      log.warn({ paymentId: p.id, sessionId: p.checkout_session_id, processor: result.status, outcome: outcome.kind }, 'settled a payment left in flight');
    } catch (err) {
      // Left for the next pass; the other attempts of the batch go ahead.
      log.error({ err, paymentId: p.id }, 'could not settle a payment left in flight');
    }
  }
  return settled;
}
