import type { Logger } from 'pino';
import { findCustomer } from '../customers/store.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { newId } from '../lib/ids.ts';
import * as payments from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { cardBrand } from '../processor/cards.ts';
import { requireProcessor } from '../processor/select.ts';
import type { AttemptLookup, CardDetails, CardFacts, Processor, TokenCard, TokenConfirmation } from '../processor/types.ts';
import { assessPayment, clientIpOf } from '../fraud/service.ts';
import type { FraudMarks } from '../payments/store.ts';
import type { Services } from '../services.ts';
import { expireInTx } from './expiry.ts';
import { callAndRecord, failPending, recordAttemptFailure, recordOutcome, type PayResult } from './settle.ts';
import * as store from './store.ts';
import type { SessionRow } from './store.ts';
import { ownerOf } from '../lib/owner.ts';
import { isPlanChoice } from '../lib/installments.ts';

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
    return { session: expired ?? session, state: 'ended' };
  }
  return { session, state: 'open' };
}

/**
 * The attempt of transaction 1: PENDING and in flight on the session's intent. `card` is what the
 * service may keep of a card it saw (the simulator's form); a Payment Element attempt has none
 * until the processor answers.
 */
function insertAttempt(
  tx: Tx,
  session: SessionRow,
  email: string | null,
  card: { name: string; brand: string; last4: string } | null,
  priorCharge: string | null = null,
  fraud?: FraudMarks,
): Promise<PaymentRow> {
  return payments.insertPayment(tx.sql, ownerOf(session), {
    id: newId('pay'),
    amount_cents: session.amount_cents,
    currency: session.currency,
    checkout_session_id: session.id,
    payment_intent_id: session.payment_intent_id,
    customer_id: session.customer_id,
    email,
    billing_name: card?.name || null,
    card_brand: card?.brand ?? null,
    card_last4: card?.last4 ?? null,
    description: session.description,
    payment_link_id: session.payment_link_id,
    link_source: session.link_source,
    invoice_id: session.invoice_id,
    processor_prior_charge: priorCharge,
    fraud,
  });
}

/** Who is paying, as the hosted page sees them: the client's address (for the fraud rules). */
export interface Payer {
  ip: string | null;
}

/** What the payer is told of an attempt a fraud rule or block list declined: nothing of which rule. */
export const BLOCKED_MESSAGE = 'Your payment could not be completed. Please use another payment method or contact the merchant.';

/**
 * The fraud rules' look at an attempt (src/fraud, docs/fraud.md), on transaction 1 before the
 * attempt is inserted (so velocity counts the earlier ones): what is recorded on the payment.
 */
async function screen(tx: Tx, s: Services, session: SessionRow, email: string | null, card: CardFacts | null, payer: Payer): Promise<FraudMarks> {
  const facts = {
    amount_cents: session.amount_cents,
    currency: session.currency,
    email,
    card_fingerprint: card?.fingerprint ?? null,
    card_country: card?.country ?? null,
    client_ip: clientIpOf(payer.ip),
  };
  const decision = await assessPayment(tx.sql, ownerOf(session), facts);
  if (decision) tx.afterCommit(() => s.metrics.fraudDecision(decision.action, session.livemode));
  return {
    card_fingerprint: facts.card_fingerprint,
    card_country: facts.card_country,
    client_ip: facts.client_ip,
    fraud_action: decision?.action ?? null,
    fraud_rule_id: decision?.ruleId ?? null,
    fraud_reason: decision?.reason ?? null,
  };
}

/** An attempt the rules block: FAILED with `blocked` and payment.failed, the processor never called. */
async function blockedAttempt(tx: Tx, s: Services, session: SessionRow, attempt: PaymentRow): Promise<PayResult> {
  return { kind: 'declined', session, payment: await recordAttemptFailure(tx, s, attempt, 'blocked', BLOCKED_MESSAGE) };
}

/** The first participant's refusal (s.paymentParticipants, built in src/compose.ts); null when all agree. */
async function refusal(tx: Tx, s: Services, session: SessionRow): Promise<string | null> {
  for (const participant of s.paymentParticipants) {
    const why = await participant.beforeCharge(tx, session);
    if (why) return why;
  }
  return null;
}

/**
 * The session's processor intent: created when the payer first presses Pay (the simulator) or
 * first opens the page (Stripe's Payment Element needs its client secret), then stored on the
 * session, so every later load and attempt reuses it. A network call, so it runs before any
 * transaction; the processor answers the same intent for the same session id, and the store keeps
 * the first one stored, so concurrent first calls are harmless. The client secret (Stripe) is for
 * the payer's browser only: never logged, never in the API. Throws ProcessorUnavailable when the
 * mode has no processor (live without keys: the page refuses before calling this).
 */
export async function intentOf(s: Services, row: SessionRow): Promise<{ id: string; clientSecret: string | null }> {
  const processor = requireProcessor(s, row.livemode);
  const secretOf = (id: string) => (processor.collectsCard === 'element' ? processor.paymentIntentSecret(id) : Promise.resolve(null));
  if (row.payment_intent_id) return { id: row.payment_intent_id, clientSecret: await secretOf(row.payment_intent_id) };
  const customer = row.customer_id ? await findCustomer(s.sql, ownerOf(row), row.customer_id) : undefined;
  const intent = await processor.createPaymentIntent({
    reference: row.id,
    amount: row.amount_cents,
    currency: row.currency,
    customer: customer?.processor_customer_id ?? null,
    livemode: row.livemode,
    saveCard: isPlanChoice(row.installment),
  });
  const stored = await store.storePaymentIntent(s.sql, ownerOf(row), row.id, intent.id);
  row.payment_intent_id = stored ?? intent.id;
  if (!stored || stored === intent.id) return intent;
  return { id: stored, clientSecret: await secretOf(stored) };
}

/**
 * One payment attempt from the hosted page (docs/payments.md, "Payments outside transactions"):
 * transaction 1 locks the session, checks it is payable, asks the payment participants (a link's
 * place is reserved), fails abandoned challenges and commits the attempt PENDING and in flight; the card then
 * goes to the processor with no transaction open and no row locked; transaction 2 records the
 * outcome. The card goes to the processor and nowhere else; the payment keeps brand and last four.
 * The test helpers pay through here too (src/test-helpers/), where email and name may be left out.
 */
export async function payWithCard(
  s: Services,
  row: SessionRow,
  card: CardDetails,
  email: string | null,
  log: Logger,
  payer: Payer = { ip: null },
): Promise<PayResult> {
  const processor = requireProcessor(s, row.livemode);
  // Stored on the session before transaction 1, which then reads it with the lock.
  await intentOf(s, row);
  // The card's fingerprint and country for the rules: asked of the processor with nothing open.
  const facts = processor.cardFacts ? await processor.cardFacts(card) : null;
  const started = await withTx(s, log, async (tx): Promise<PayResult | Started> => {
    const locked = await lockPayable(tx, s, row);
    const session = locked.session;
    if (locked.state !== 'open') return { kind: locked.state, session };
    const refused = await refusal(tx, s, session);
    if (refused) return { kind: 'refused', session, message: refused };
    await failPending(tx, s, session, 'authentication_abandoned', 'A new attempt replaced this one before 3-D Secure was finished.');
    const marks = await screen(tx, s, session, email, facts, payer);
    const attempt = await insertAttempt(tx, session, email, { name: card.name, brand: cardBrand(card.number), last4: card.number.slice(-4) }, null, marks);
    if (marks.fraud_action === 'block') return blockedAttempt(tx, s, session, attempt);
    return { kind: 'started', session, attempt };
  });
  if (started.kind !== 'started') return started;
  const { session, attempt } = started;
  // The first part of an installment plan: the processor keeps the card for the later parts.
  // A review holds the payment: authorised now, captured only when a person approves it.
  const opts = { saveCard: isPlanChoice(session.installment), captureLater: attempt.fraud_action === 'review' };
  return callAndRecord(s, session, attempt, log, () => processor.confirmPaymentIntent(session.payment_intent_id!, attempt.id, card, opts));
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
  return callAndRecord(s, session, attempt, log, () => requireProcessor(s, session.livemode).completeAuthentication(session.payment_intent_id!, attempt.id, outcome));
}

/** A page load of a session waiting on a challenge: the attempt, when it is still pending. */
export async function pendingChallenge(s: Services, row: SessionRow, paymentId: string): Promise<PaymentRow | undefined> {
  const p = await payments.findPayment(s.sql, ownerOf(row), paymentId);
  return p && p.checkout_session_id === row.id && p.status === 'PENDING' && p.next_action === 'three_d_secure' ? p : undefined;
}

/** The Payment Element's intent (intentOf: created on the first load, then reused) and its client secret. */
export async function elementIntent(s: Services, row: SessionRow): Promise<{ session: SessionRow; clientSecret: string }> {
  const intent = await intentOf(s, row);
  if (!intent.clientSecret) throw new Error(`the processor gave no client secret for session ${row.id}`);
  return { session: row, clientSecret: intent.clientSecret };
}

export type ElementStart = Started | PayResult;

/**
 * What the prepare post of a Payment Element payment ends in: an outcome (PayResult), or the
 * payer's browser must act (`next_action`: 3-D Secure through stripe.handleNextAction with the
 * client secret), or the token is unusable (`invalid_token`: the page makes a new one), or the
 * processor could not be reached before anything was recorded (`unavailable`).
 */
export type ElementResult =
  | PayResult
  | { kind: 'next_action'; session: SessionRow; payment: PaymentRow; clientSecret: string }
  | { kind: 'invalid_token'; session: SessionRow }
  | { kind: 'unavailable'; session: SessionRow };

/**
 * A Payment Element payment finalized on the server (docs/decisions.md, issue 27 point 4): the
 * browser made a confirmation token of the card (Stripe.js `createConfirmationToken`), so that
 * the card's fingerprint and country are read from it before anything is charged (no transaction
 * open); transaction 1 screens the attempt with them and records it in flight (a block ends there,
 * nothing charged); the intent is confirmed with the token, with manual capture when a review rule
 * holds it; transaction 2 records the answer. 3-D Secure leaves the attempt in flight: the browser
 * finishes it and comes back to the return page, which records it like the processor's webhook.
 */
export async function payWithToken(
  s: Services,
  processor: Processor,
  row: SessionRow,
  input: { email: string; token: string; returnUrl: string },
  log: Logger,
  payer: Payer = { ip: null },
): Promise<ElementResult> {
  if (!processor.cardOfToken || !processor.confirmWithToken) throw new Error(`processor ${processor.name} takes no confirmation token`);
  let read: Awaited<ReturnType<NonNullable<Processor['cardOfToken']>>>;
  try {
    read = await processor.cardOfToken(input.token);
  } catch (err) {
    log.warn({ err, sessionId: row.id }, 'processor unavailable while reading a confirmation token');
    return { kind: 'unavailable', session: row };
  }
  if (read.status !== 'ok') return { kind: 'invalid_token', session: row };
  const started = await startElementAttempt(s, processor, row, input.email, log, payer, { card: read.card });
  if (started.kind !== 'started') return started;
  const { session, attempt } = started;
  let answer: TokenConfirmation;
  try {
    answer = await processor.confirmWithToken(session.payment_intent_id!, attempt.id, input.token, { captureLater: attempt.fraud_action === 'review', returnUrl: input.returnUrl });
  } catch (err) {
    log.error({ err, paymentId: attempt.id }, 'processor call failed; the payment stays in flight until the sweeper settles it');
    return { kind: 'in_progress', session };
  }
  const recorded = await recordOutcome(s, attempt, answer, log);
  if (recorded.kind === 'in_progress' && answer.status === 'processing' && answer.clientSecret) {
    return { kind: 'next_action', session: recorded.session, payment: attempt, clientSecret: answer.clientSecret };
  }
  return recorded;
}

/**
 * Transaction 1 of a Payment Element payment (payWithToken): the same lock, payable check,
 * participants and abandoned challenges as payWithCard, then the fraud rules with the card the
 * token shows, and the attempt PENDING and in flight on the session's intent. An attempt of the
 * same intent already in flight (an earlier press whose 3-D Secure the payer failed, or whose
 * confirmation never reached Stripe) is asked about first: settled or never confirmed, it is
 * recorded with its event and a new attempt starts; still with Stripe, the payer is told it is
 * in progress.
 */
export async function startElementAttempt(
  s: Services,
  processor: Processor,
  row: SessionRow,
  email: string,
  log: Logger,
  payer: Payer = { ip: null },
  token: { card: TokenCard } | null = null,
): Promise<ElementStart> {
  const card = token?.card ?? null;
  const o = ownerOf(row);
  for (let round = 0; ; round++) {
    if (!row.payment_intent_id) throw new Error(`session ${row.id} has no payment intent: the page stores it first`);
    // The intent as it stands before this attempt: the outcome of an earlier press still in flight,
    // and the last charge, whose decline reported later must not fail this attempt (recordIntentOutcome).
    let intentNow: AttemptLookup;
    try {
      intentNow = await processor.retrieveAttempt(row.payment_intent_id, '');
    } catch (err) {
      log.warn({ err, sessionId: row.id }, 'processor unavailable while preparing a payment');
      return { kind: 'in_progress', session: row };
    }
    const prior = intentNow.charge ?? null;
    const started = await withTx(s, log, async (tx): Promise<ElementStart | { kind: 'in_flight'; attempt: PaymentRow }> => {
      const locked = await lockPayable(tx, s, row);
      const session = locked.session;
      if (locked.state === 'in_progress') {
        const current = await payments.inFlightOfSession(tx.sql, o, session.id);
        const ours = current && !current.review_status && current.payment_intent_id === session.payment_intent_id && (token || !current.card_last4);
        return ours && round === 0 ? { kind: 'in_flight', attempt: current } : { kind: 'in_progress', session };
      }
      if (locked.state !== 'open') return { kind: locked.state, session };
      const refused = await refusal(tx, s, session);
      if (refused) return { kind: 'refused', session, message: refused };
      await failPending(tx, s, session, 'authentication_abandoned', 'A new attempt replaced this one before 3-D Secure was finished.');
      // The card as the confirmation token shows it (docs/fraud.md "Card facts"): nothing charged yet.
      const marks = await screen(tx, s, session, email, card, payer);
      const shown = card?.last4 ? { name: '', brand: card.brand ?? 'unknown', last4: card.last4 } : null;
      const attempt = await insertAttempt(tx, session, email, shown, prior, marks);
      if (marks.fraud_action === 'block') return blockedAttempt(tx, s, session, attempt);
      return { kind: 'started', session, attempt };
    });
    if (!token && started.kind === 'started' && started.attempt.fraud_action === 'review' && processor.setManualCapture) {
      // A page without a token (opened before server-side confirmation): the browser's confirmation
      // must only authorise. A failed call leaves the attempt in flight for the sweeper.
      try {
        await processor.setManualCapture(row.payment_intent_id);
      } catch (err) {
        log.warn({ err, sessionId: row.id }, 'could not set manual capture for a payment held for review');
        return { kind: 'in_progress', session: started.session };
      }
    }
    if (started.kind !== 'in_flight') return started;
    // An earlier press on the same intent is still in flight: what the intent said just now is its outcome.
    const { attempt } = started;
    // Still with Stripe: a page without a token confirms it in the browser (the attempt is reused);
    // with a token the server would confirm, which Stripe refuses while it is processing.
    if (intentNow.status === 'processing') return token ? { kind: 'in_progress', session: row } : { kind: 'started', session: row, attempt };
    const recorded = await recordOutcome(s, attempt, intentNow, log);
    if (recorded.kind !== 'declined') return recorded;
  }
}
