import type { Logger } from 'pino';
import { findCustomer } from '../customers/store.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { recordEvent } from '../events/record.ts';
import { newId } from '../lib/ids.ts';
import { presentPayment } from '../payments/presenter.ts';
import * as payments from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { cardBrand } from '../processor/cards.ts';
import type { CardDetails, ChargeResult } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { expireInTx, unscheduleExpiry } from './expiry.ts';
import { paymentHooks } from './hooks.ts';
import { presentSession } from './presenter.ts';
import * as store from './store.ts';
import type { SessionRow } from './store.ts';
import { ownerOf } from '../lib/owner.ts';

export type PayResult =
  | { kind: 'succeeded'; session: SessionRow; payment: PaymentRow }
  | { kind: 'declined'; session: SessionRow; payment: PaymentRow }
  | { kind: 'requires_action'; session: SessionRow; payment: PaymentRow }
  | { kind: 'refused'; session: SessionRow; message: string }
  | { kind: 'ended'; session: SessionRow }
  | { kind: 'no_challenge'; session: SessionRow };


/**
 * Locks the session and checks that it can still be paid: OPEN and before expires_at. A session
 * found past expires_at is expired here, in this transaction, with its event (expiry and payment
 * race on this lock to exactly one winner).
 */
async function lockPayable(tx: Tx, s: Services, row: SessionRow): Promise<{ session: SessionRow; open: boolean }> {
  const o = ownerOf(row);
  const session = await store.lockSession(tx.sql, o, row.id);
  if (!session) throw new Error(`checkout session ${row.id} vanished`);
  if (session.status !== 'OPEN') return { session, open: false };
  if (session.expires_at.getTime() <= Date.now()) {
    const expired = await expireInTx(tx, s, o, row.id, new Date());
    tx.afterCommit(() => unscheduleExpiry(s, row.id));
    return { session: expired ?? session, open: false };
  }
  return { session, open: true };
}

async function refusal(tx: Tx, session: SessionRow): Promise<string | null> {
  for (const hook of paymentHooks) {
    const why = await hook.beforeCharge(tx, session);
    if (why) return why;
  }
  return null;
}

async function failPending(tx: Tx, s: Services, session: SessionRow, code: string, message: string): Promise<void> {
  for (const p of await payments.failAbandoned(tx.sql, ownerOf(session), session.id, code, message)) {
    await recordEvent(tx, session.account_id, 'payment.failed', presentPayment(p, s.config.checkoutUrl));
  }
}

/** The winning outcome: payment SUCCEEDED, session COMPLETE and paid, both events, the hooks, in one transaction. */
async function succeed(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow): Promise<PayResult> {
  const o = ownerOf(session);
  const payment = await payments.markSucceeded(tx.sql, o, attempt.id);
  const completed = await store.markComplete(tx.sql, o, session.id, payment.id);
  await recordEvent(tx, o.accountId, 'checkout.session.completed', presentSession(completed, s.config.checkoutUrl));
  await recordEvent(tx, o.accountId, 'payment.succeeded', presentPayment(payment, s.config.checkoutUrl));
  await failPending(tx, s, completed, 'authentication_abandoned', 'Another attempt paid the checkout session before this one was finished.');
  for (const hook of paymentHooks) await hook.afterSuccess(tx, completed, payment);
  tx.afterCommit(() => unscheduleExpiry(s, session.id));
  return { kind: 'succeeded', session: completed, payment };
}

async function settle(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow, result: ChargeResult): Promise<PayResult> {
  const o = ownerOf(session);
  if (result.status === 'succeeded') return succeed(tx, s, session, attempt);
  if (result.status === 'requires_action') {
    return { kind: 'requires_action', session, payment: await payments.markRequiresAction(tx.sql, o, attempt.id) };
  }
  const payment = await payments.markFailed(tx.sql, o, attempt.id, result.code, result.message);
  await recordEvent(tx, o.accountId, 'payment.failed', presentPayment(payment, s.config.checkoutUrl));
  return { kind: 'declined', session, payment };
}

/**
 * One payment attempt from the hosted page, in one transaction: lock the session, check it is
 * payable, ask the hooks, charge through the processor, record the outcome. The card goes to the
 * processor and nowhere else; the payment keeps its brand and last four digits.
 */
export async function payWithCard(
  s: Services,
  row: SessionRow,
  card: CardDetails,
  email: string,
  log: Logger,
): Promise<PayResult> {
  const o = ownerOf(row);
  return withTx(s, log, async (tx) => {
    const locked = await lockPayable(tx, s, row);
    let session = locked.session;
    if (!locked.open) return { kind: 'ended', session };
    const refused = await refusal(tx, session);
    if (refused) return { kind: 'refused', session, message: refused };
    await failPending(tx, s, session, 'authentication_abandoned', 'A new attempt replaced this one before 3-D Secure was finished.');

    if (!session.payment_intent_id) {
      const customer = session.customer_id ? await findCustomer(s.sql, o, session.customer_id) : undefined;
      const intent = await s.processor.createPaymentIntent({
        reference: session.id,
        amount: session.amount_cents,
        currency: session.currency,
        customer: customer?.processor_customer_id ?? null,
        livemode: session.livemode,
      });
      session = await store.setPaymentIntent(tx.sql, o, session.id, intent.id);
    }
    const attempt = await payments.insertPayment(tx.sql, o, {
      id: newId('pay'),
      amount_cents: session.amount_cents,
      currency: session.currency,
      checkout_session_id: session.id,
      payment_intent_id: session.payment_intent_id,
      customer_id: session.customer_id,
      email,
      billing_name: card.name,
      card_brand: cardBrand(card.number),
      card_last4: card.number.slice(-4),
      description: session.description,
      payment_link_id: session.payment_link_id,
      link_source: session.link_source,
    });
    const result = await s.processor.confirmPaymentIntent(session.payment_intent_id!, attempt.id, card);
    return settle(tx, s, session, attempt, result);
  });
}

/** The payer passed or failed the 3-D Secure challenge of attempt `paymentId`. */
export async function finishChallenge(
  s: Services,
  row: SessionRow,
  paymentId: string,
  outcome: 'complete' | 'fail',
  log: Logger,
): Promise<PayResult> {
  const o = ownerOf(row);
  return withTx(s, log, async (tx) => {
    const { session, open } = await lockPayable(tx, s, row);
    if (!open) return { kind: 'ended', session };
    const attempt = await payments.lockPendingChallenge(tx.sql, o, session.id, paymentId);
    if (!attempt) return { kind: 'no_challenge', session };
    if (outcome === 'complete') {
      const refused = await refusal(tx, session);
      if (refused) {
        const payment = await payments.markFailed(tx.sql, o, attempt.id, 'checkout_unavailable', refused);
        await recordEvent(tx, o.accountId, 'payment.failed', presentPayment(payment, s.config.checkoutUrl));
        return { kind: 'refused', session, message: refused };
      }
    }
    const result = await s.processor.completeAuthentication(session.payment_intent_id!, attempt.id, outcome);
    return settle(tx, s, session, attempt, result);
  });
}

/** A page load of a session waiting on a challenge: the attempt, when it is still pending. */
export async function pendingChallenge(s: Services, row: SessionRow, paymentId: string): Promise<PaymentRow | undefined> {
  const p = await payments.findPayment(s.sql, ownerOf(row), paymentId);
  return p && p.checkout_session_id === row.id && p.status === 'PENDING' && p.next_action === 'three_d_secure' ? p : undefined;
}

/** Fixed-window counter per session in Redis: card testing gets a handful of tries, not thousands. */
export const PAY_ATTEMPTS_PER_WINDOW = 10;
export const PAY_WINDOW_SECONDS = 3600;

export async function allowPaymentAttempt(s: Services, sessionId: string, log: Logger): Promise<boolean> {
  const key = `${s.config.redisPrefix}:ratelimit:checkout-pay:${sessionId}`;
  try {
    const [[, count]] = (await s.redis.multi().incr(key).expire(key, PAY_WINDOW_SECONDS, 'NX').exec()) as [[unknown, number]];
    return count <= PAY_ATTEMPTS_PER_WINDOW;
  } catch (err) {
    // Redis only carries work: payments go on without it, unthrottled, and the log says so.
    log.warn({ err }, 'payment rate limit unavailable');
    return true;
  }
}
