import type { Logger } from 'pino';
import { findCustomer } from '../customers/store.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { newId } from '../lib/ids.ts';
import * as payments from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { cardBrand } from '../processor/cards.ts';
import type { CardDetails } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { expireInTx } from './expiry.ts';
import { unscheduleExpiry } from './jobs.ts';
import { callAndRecord, failPending, recordAttemptFailure, type PayResult } from './settle.ts';
import * as store from './store.ts';
import type { SessionRow } from './store.ts';
import { ownerOf } from '../lib/owner.ts';

export type { PayResult } from './settle.ts';

type Started = { kind: 'started'; session: SessionRow; attempt: PaymentRow };

/**
 * Locks the session and checks that it can still be paid: OPEN, no other attempt in flight, and
 * before expires_at. A session found past expires_at is expired here, in this transaction, with
 * its event (expiry and payment race on this lock to exactly one winner). The in-flight check is a
 * statement after the lock, so it sees every attempt committed before the lock was granted.
 */
async function lockPayable(tx: Tx, s: Services, row: SessionRow): Promise<{ session: SessionRow; state: 'open' | 'ended' | 'in_progress' }> {
  const o = ownerOf(row);
  const session = await store.lockSession(tx.sql, o, row.id);
  if (!session) throw new Error(`checkout session ${row.id} vanished`);
  if (session.status !== 'OPEN') return { session, state: 'ended' };
  if (await payments.inFlightOfSession(tx.sql, o, row.id)) return { session, state: 'in_progress' };
  if (session.expires_at.getTime() <= Date.now()) {
    const expired = await expireInTx(tx, s, o, row.id, new Date());
    tx.afterCommit(() => unscheduleExpiry(s, row.id));
    return { session: expired ?? session, state: 'ended' };
  }
  return { session, state: 'open' };
}

/** The first participant's refusal (s.paymentParticipants, built in src/services.ts); null when all agree. */
async function refusal(tx: Tx, s: Services, session: SessionRow): Promise<string | null> {
  for (const participant of s.paymentParticipants) {
    const why = await participant.beforeCharge(tx, session);
    if (why) return why;
  }
  return null;
}

/**
 * The session's processor intent, created when the payer first presses Pay. A network call, so it
 * runs before any transaction; the processor answers the same intent for the same session id, so
 * concurrent first attempts (or one whose transaction then finds the session ended) are harmless.
 */
async function intentOf(s: Services, row: SessionRow): Promise<string> {
  if (row.payment_intent_id) return row.payment_intent_id;
  const customer = row.customer_id ? await findCustomer(s.sql, ownerOf(row), row.customer_id) : undefined;
  const intent = await s.processor.createPaymentIntent({
    reference: row.id,
    amount: row.amount_cents,
    currency: row.currency,
    customer: customer?.processor_customer_id ?? null,
    livemode: row.livemode,
  });
  return intent.id;
}

/**
 * One payment attempt from the hosted page (docs/payments.md, "Payments outside transactions"):
 * transaction 1 locks the session, checks it is payable, asks the payment participants (a link's
 * place is reserved), fails abandoned challenges and commits the attempt PENDING and in flight; the card then
 * goes to the processor with no transaction open and no row locked; transaction 2 records the
 * outcome. The card goes to the processor and nowhere else; the payment keeps brand and last four.
 */
export async function payWithCard(
  s: Services,
  row: SessionRow,
  card: CardDetails,
  email: string,
  log: Logger,
): Promise<PayResult> {
  const o = ownerOf(row);
  const intentId = await intentOf(s, row);
  const started = await withTx(s, log, async (tx): Promise<PayResult | Started> => {
    const locked = await lockPayable(tx, s, row);
    let session = locked.session;
    if (locked.state !== 'open') return { kind: locked.state, session };
    const refused = await refusal(tx, s, session);
    if (refused) return { kind: 'refused', session, message: refused };
    await failPending(tx, s, session, 'authentication_abandoned', 'A new attempt replaced this one before 3-D Secure was finished.');
    if (!session.payment_intent_id) session = await store.setPaymentIntent(tx.sql, o, session.id, intentId);
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
    return { kind: 'started', session, attempt };
  });
  if (started.kind !== 'started') return started;
  const { session, attempt } = started;
  return callAndRecord(s, session, attempt, log, () => s.processor.confirmPaymentIntent(session.payment_intent_id!, attempt.id, card));
}

/** The payer passed or failed the 3-D Secure challenge of attempt `paymentId`: the same three steps. */
export async function finishChallenge(
  s: Services,
  row: SessionRow,
  paymentId: string,
  outcome: 'complete' | 'fail',
  log: Logger,
): Promise<PayResult> {
  const o = ownerOf(row);
  const started = await withTx(s, log, async (tx): Promise<PayResult | Started> => {
    const { session, state } = await lockPayable(tx, s, row);
    if (state !== 'open') return { kind: state, session };
    const waiting = await payments.lockPendingChallenge(tx.sql, o, session.id, paymentId);
    if (!waiting) return { kind: 'no_challenge', session };
    if (outcome === 'complete') {
      const refused = await refusal(tx, s, session);
      if (refused) {
        await recordAttemptFailure(tx, s, waiting, 'checkout_unavailable', refused);
        return { kind: 'refused', session, message: refused };
      }
    }
    return { kind: 'started', session, attempt: await payments.markProcessing(tx.sql, o, waiting.id) };
  });
  if (started.kind !== 'started') return started;
  const { session, attempt } = started;
  return callAndRecord(s, session, attempt, log, () => s.processor.completeAuthentication(session.payment_intent_id!, attempt.id, outcome));
}

/** A page load of a session waiting on a challenge: the attempt, when it is still pending. */
export async function pendingChallenge(s: Services, row: SessionRow, paymentId: string): Promise<PaymentRow | undefined> {
  const p = await payments.findPayment(s.sql, ownerOf(row), paymentId);
  return p && p.checkout_session_id === row.id && p.status === 'PENDING' && p.next_action === 'three_d_secure' ? p : undefined;
}
