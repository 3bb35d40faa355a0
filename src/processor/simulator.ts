import { createHash } from 'node:crypto';
import { newId } from '../lib/ids.ts';
import type { Sql } from '../db/sql.ts';
import { simulatorDisputes } from './simulator-disputes.ts';
import { simulatorFraud } from './simulator-fraud.ts';
import { cardBrand } from './cards.ts';
import type { AttemptLookup, CardDetails, ChargeAnswer, ChargeResult, DeclineCode, Processor, RefundLookup, SetupLookup, SetupResult } from './types.ts';

/** The usual test cards (DESIGN 7); any other valid number succeeds. */
const DECLINES: Record<string, DeclineCode> = {
  '4000000000000002': 'card_declined',
  '4000000000009995': 'insufficient_funds',
  '4000000000000069': 'expired_card',
  '4000000000000127': 'incorrect_cvc',
  '4000000000009987': 'lost_card',
  '4000000000009979': 'stolen_card',
};

const THREE_D_SECURE = new Set(['4000000000003220', '4000002500003155']);

/** The simulator's customer of one of ours: derived from the reference, so the same every time, and made without a call. */
export function simulatedCustomerId(reference: string, livemode: boolean): string {
  const digest = createHash('sha256').update(`${livemode ? 'live' : 'test'}:${reference}`).digest('hex');
  return `pcus_sim_${digest.slice(0, 24)}`;
}

/**
 * Cards whose charge succeeds but whose later life is scripted, as Stripe's test cards: the
 * behaviour is kept with the simulator's attempt (never the card number) for refunds and disputes.
 */
export type AttemptBehaviour = 'refunds_fail' | 'refunds_pending' | 'disputed' | 'off_session_declines';
const BEHAVIOURS: Record<string, AttemptBehaviour> = {
  '4000000000005126': 'refunds_fail',
  // Stripe's "refund pending" card: its refunds stay PENDING (here for a day, then succeed), long
  // enough to cancel one by hand.
  '4000000000007726': 'refunds_pending',
  '4000000000000259': 'disputed',
  // Stripe's "attaches but charges fail" card, as the simulator plays it: the payment made with the
  // cardholder present (the first part of a plan) succeeds and the card is saved; every later
  // off-session charge of the saved card is declined (card_declined). For testing dunning.
  '4000000000000341': 'off_session_declines',
};

/** The simulator's test card whose saved card declines every off-session charge. */
export const OFF_SESSION_DECLINE_CARD = '4000000000000341';

export const DECLINE_MESSAGES: Record<DeclineCode, string> = {
  card_declined: 'Your card was declined.',
  insufficient_funds: 'Your card was declined: insufficient funds.',
  expired_card: 'Your card was declined: the card has expired.',
  incorrect_cvc: 'Your card was declined: the security code (CVC) is incorrect.',
  lost_card: 'Your card was declined.',
  stolen_card: 'Your card was declined.',
  authentication_failed: '3-D Secure authentication failed. Your card was not charged.',
  authentication_required: 'Your bank asked to confirm this payment, which cannot be done while you are away.',
};

const declined = (code: DeclineCode): ChargeResult => ({ status: 'declined', code, message: DECLINE_MESSAGES[code] });

interface AttemptRecord {
  status: 'succeeded' | 'requires_action' | 'declined' | 'not_found';
  code: DeclineCode | null;
  message: string | null;
  /** The card saved by (or charged off-session in) this attempt; answered once it succeeded. */
  payment_method: string | null;
}

const asResult = (r: AttemptRecord): AttemptLookup =>
  r.status === 'declined'
    ? { status: 'declined', code: r.code!, message: r.message! }
    : r.status === 'requires_action'
      ? { status: 'requires_action', action: 'three_d_secure' }
      : r.status === 'succeeded'
        ? { status: 'succeeded', ...(r.payment_method ? { paymentMethod: r.payment_method } : {}) }
        : { status: r.status };

/** An attempt closed by a not_found answer is refused if its confirmation arrives after all. */
const asCharge = (r: AttemptRecord): ChargeAnswer => {
  const res = asResult(r);
  return res.status === 'not_found' || res.status === 'processing' ? declined('card_declined') : (res as ChargeAnswer);
};

/** A setup is kept as an attempt on this pseudo-intent. */
const SETUP_INTENT = 'setup';

const asSetup = (r: AttemptRecord, card: { brand: string; last4: string } | null): SetupLookup =>
  r.status === 'succeeded'
    ? { status: 'succeeded', paymentMethod: r.payment_method!, card }
    : r.status === 'declined'
      ? { status: 'declined', code: r.code!, message: r.message! }
      : r.status === 'requires_action'
        ? { status: 'requires_action', action: 'three_d_secure' }
        : { status: 'not_found' };

/** The simulator's token of a card saved by attempt `attempt`: derived from it, so a retry saves the same. */
const tokenOf = (attempt: string) => `pm_sim_${createHash('sha256').update(attempt).digest('hex').slice(0, 24)}`;

/**
 * The built-in processor. Customer ids are derived from our reference (a retried job gets the same
 * id, as an idempotency key would give) and the outcome of a charge is decided by the card number.
 * Intents and attempts are kept in its own tables (simulator_*), written with its own statements
 * and never inside one of our transactions, the way a real processor keeps them on its side: so
 * calls are idempotent (by session id, by payment id) and an attempt can be asked about again
 * after a crash.
 */
/**
 * How long a simulated refund stays pending before the simulator decides it (a card refund takes
 * days at a real processor; "within about a second" in test mode, issue 11 point 6).
 */
export const SIMULATOR_REFUND_SETTLE_MS = 400;
/** How long refunds of card 4000 0000 0000 7726 (behaviour refunds_pending) stay pending. */
export const SIMULATOR_REFUND_PENDING_MS = 24 * 3600 * 1000;
/** failure_reason of refunds of card 4000 0000 0000 5126 (behaviour refunds_fail). */
export const SIMULATOR_REFUND_FAILURE = 'declined';

interface RefundRecord {
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  failure_reason: string | null;
}

const asRefund = (r: RefundRecord | undefined): RefundLookup =>
  !r ? { status: 'not_found' } : r.status === 'failed' ? { status: 'failed', reason: r.failure_reason ?? SIMULATOR_REFUND_FAILURE } : { status: r.status };

export function createSimulator(sql: Sql): Processor {
  /**
   * A pending refund past settle_at gets its planned outcome, in one conditional statement: a
   * concurrent cancel (also conditional on 'pending') and this settle have exactly one winner.
   */
  async function settleDue(reference: string): Promise<void> {
    await sql`
      update simulator_refunds set status = planned, failure_reason = case when planned = 'failed' then ${SIMULATOR_REFUND_FAILURE} end,
        updated_at = now()
      where refund_id = ${reference} and status = 'pending' and settle_at <= now()`;
  }
  async function readRefund(reference: string): Promise<RefundLookup> {
    const [row] = await sql<RefundRecord[]>`select status, failure_reason from simulator_refunds where refund_id = ${reference}`;
    return asRefund(row);
  }

  async function record(
    intentId: string,
    attempt: string,
    r: ChargeResult,
    behaviour: AttemptBehaviour | null = null,
    paymentMethod: string | null = null,
    capture: 'automatic' | 'manual' = 'automatic',
  ): Promise<ChargeAnswer> {
    const code = r.status === 'declined' ? r.code : null;
    const message = r.status === 'declined' ? r.message : null;
    await sql`
      insert into simulator_attempts (attempt_id, intent_id, status, code, message, behaviour, payment_method, capture)
      values (${attempt}, ${intentId}, ${r.status}, ${code}, ${message}, ${behaviour}, ${paymentMethod}, ${capture})
      on conflict (attempt_id) do nothing`;
    // The first outcome stands: a retried confirmation answers it again.
    const [row] = await sql<AttemptRecord[]>`select status, code, message, payment_method from simulator_attempts where attempt_id = ${attempt}`;
    return asCharge(row!);
  }

  /**
   * Keeps the card of attempt `attempt` as a reusable token: brand, last four and its scripted
   * behaviour (card 0341: later off-session charges decline). Never the number, the expiry or the CVC.
   */
  async function saveCard(attempt: string, card: CardDetails, livemode: boolean): Promise<string> {
    const id = tokenOf(attempt);
    const behaviour = BEHAVIOURS[card.number] === 'off_session_declines' ? 'off_session_declines' : null;
    await sql`
      insert into simulator_payment_methods (id, livemode, brand, last4, behaviour)
      values (${id}, ${livemode}, ${cardBrand(card.number)}, ${card.number.slice(-4)}, ${behaviour})
      on conflict (id) do nothing`;
    return id;
  }

  async function livemodeOf(intentId: string): Promise<boolean> {
    const [row] = await sql<{ livemode: boolean }[]>`select livemode from simulator_intents where id = ${intentId}`;
    return row?.livemode ?? false;
  }

  async function readSetup(reference: string): Promise<SetupLookup> {
    const [row] = await sql<(AttemptRecord & { brand: string | null; last4: string | null })[]>`
      select a.status, a.code, a.message, a.payment_method, m.brand, m.last4
      from simulator_attempts a left join simulator_payment_methods m on m.id = a.payment_method
      where a.attempt_id = ${reference} and a.intent_id = ${SETUP_INTENT}`;
    if (!row) return { status: 'not_found' };
    return asSetup(row, row.brand && row.last4 ? { brand: row.brand, last4: row.last4 } : null);
  }

  return {
    name: 'simulator',
    collectsCard: 'server',
    publishableKey: null,
    ...simulatorDisputes(sql),
    ...simulatorFraud(sql),
    async createCustomer({ reference, livemode }) {
      return { id: simulatedCustomerId(reference, livemode) };
    },
    customerIdOf: simulatedCustomerId,
    async createPaymentIntent({ reference, amount, currency, customer, livemode }) {
      await sql`
        insert into simulator_intents (id, reference, amount_cents, currency, customer, livemode)
        values (${newId('pi')}, ${reference}, ${amount}, ${currency}, ${customer}, ${livemode})
        on conflict (reference) do nothing`;
      const [row] = await sql<{ id: string }[]>`select id from simulator_intents where reference = ${reference}`;
      return { id: row!.id, clientSecret: null };
    },
    async paymentIntentSecret() {
      return null;
    },
    async cancelPaymentIntent() {
      // The simulator's intents are confirmed only through the service's own form, which an expired session refuses.
      return true;
    },
    async confirmPaymentIntent(intentId, attempt, card, opts = {}) {
      const decline = DECLINES[card.number];
      if (decline) return record(intentId, attempt, declined(decline));
      // A card to keep is kept before the answer (a 3-D Secure card is kept once the challenge passes).
      const saved = opts.saveCard ? await saveCard(attempt, card, await livemodeOf(intentId)) : null;
      // A payment held for review is authorised only: captured or voided when the review closes.
      const capture = opts.captureLater ? 'manual' : 'automatic';
      if (THREE_D_SECURE.has(card.number)) return record(intentId, attempt, { status: 'requires_action', action: 'three_d_secure' }, null, saved, capture);
      return record(intentId, attempt, { status: 'succeeded' }, BEHAVIOURS[card.number] ?? null, saved, capture);
    },
    async completeAuthentication(intentId, attempt, outcome) {
      const r = outcome === 'complete' ? ({ status: 'succeeded' } as const) : declined('authentication_failed');
      const code = r.status === 'declined' ? r.code : null;
      const message = r.status === 'declined' ? r.message : null;
      await sql`
        update simulator_attempts set status = ${r.status}, code = ${code}, message = ${message}, updated_at = now()
        where attempt_id = ${attempt} and intent_id = ${intentId} and status = 'requires_action'`;
      const [row] = await sql<AttemptRecord[]>`
        select status, code, message, payment_method from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId}`;
      if (!row) throw new Error(`simulator: no attempt ${attempt} on ${intentId}`);
      return asCharge(row);
    },
    async retrieveAttempt(intentId, attempt) {
      // Answering not_found closes the attempt (a tombstone), so a late confirmation cannot charge it.
      await sql`
        insert into simulator_attempts (attempt_id, intent_id, status) values (${attempt}, ${intentId}, 'not_found')
        on conflict (attempt_id) do nothing`;
      const [row] = await sql<AttemptRecord[]>`
        select status, code, message, payment_method from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId}`;
      return row ? asResult(row) : { status: 'not_found' };
    },
    async chargeSavedCard({ reference, paymentMethod, amount, currency, livemode }) {
      // One intent per charge (reference: our payment id), so refunds of the part find it as any other.
      await sql`
        insert into simulator_intents (id, reference, amount_cents, currency, customer, livemode)
        values (${newId('pi')}, ${reference}, ${amount}, ${currency}, null, ${livemode})
        on conflict (reference) do nothing`;
      const [intent] = await sql<{ id: string }[]>`select id from simulator_intents where reference = ${reference}`;
      const [pm] = await sql<{ brand: string; last4: string; behaviour: string | null; livemode: boolean }[]>`
        select brand, last4, behaviour, livemode from simulator_payment_methods where id = ${paymentMethod}`;
      const outcome: ChargeResult =
        !pm || pm.livemode !== livemode || pm.behaviour === 'off_session_declines' ? declined('card_declined') : { status: 'succeeded' };
      const answer = await record(intent!.id, reference, outcome, null, pm ? paymentMethod : null);
      return { ...answer, intentId: intent!.id, card: pm ? { brand: pm.brand, last4: pm.last4 } : null };
    },
    async setupCard(reference, card, livemode) {
      const decline = DECLINES[card.number];
      const saved = decline ? null : await saveCard(reference, card, livemode);
      const r: ChargeResult = decline
        ? declined(decline)
        : THREE_D_SECURE.has(card.number)
          ? { status: 'requires_action', action: 'three_d_secure' }
          : { status: 'succeeded' };
      await record(SETUP_INTENT, reference, r, null, saved);
      return (await readSetup(reference)) as SetupResult;
    },
    async completeSetupAuthentication(reference, outcome) {
      const r = outcome === 'complete' ? ({ status: 'succeeded' } as const) : declined('authentication_failed');
      await sql`
        update simulator_attempts set status = ${r.status}, code = ${r.status === 'declined' ? r.code : null},
          message = ${r.status === 'declined' ? r.message : null}, updated_at = now()
        where attempt_id = ${reference} and intent_id = ${SETUP_INTENT} and status = 'requires_action'`;
      const answer = await readSetup(reference);
      if (answer.status === 'not_found' || answer.status === 'processing') throw new Error(`simulator: no setup ${reference}`);
      return answer;
    },
    async retrieveSetup(reference) {
      await sql`
        insert into simulator_attempts (attempt_id, intent_id, status) values (${reference}, ${SETUP_INTENT}, 'not_found')
        on conflict (attempt_id) do nothing`;
      return readSetup(reference);
    },
      async createRefund({ reference, intentId, attempt, amount, currency }) {
      // The card's scripted behaviour (4000 0000 0000 5126: refunds fail) was kept with its attempt.
      const [charged] = await sql<{ behaviour: string | null }[]>`
        select behaviour from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId} and status = 'succeeded'`;
      if (!charged) return { status: 'failed', reason: 'charge_not_found' };
      const planned = charged.behaviour === 'refunds_fail' ? 'failed' : 'succeeded';
      const settleMs = charged.behaviour === 'refunds_pending' ? SIMULATOR_REFUND_PENDING_MS : SIMULATOR_REFUND_SETTLE_MS;
      await sql`
        insert into simulator_refunds (refund_id, attempt_id, amount_cents, currency, status, planned, settle_at)
        values (${reference}, ${attempt}, ${amount}, ${currency}, 'pending', ${planned},
          now() + make_interval(secs => ${settleMs / 1000}))
        on conflict (refund_id) do nothing`;
      await settleDue(reference);
      const r = await readRefund(reference);
      if (r.status === 'not_found') throw new Error(`simulator: refund ${reference} vanished`);
      return r;
    },
    async retrieveRefund(reference) {
      await settleDue(reference);
      return readRefund(reference);
    },
    async cancelRefund(reference) {
      await settleDue(reference);
      await sql`
        update simulator_refunds set status = 'canceled', updated_at = now()
        where refund_id = ${reference} and status = 'pending'`;
      // Never asked for: a tombstone, so that a createRefund still on its way answers canceled.
      await sql`
        insert into simulator_refunds (refund_id, attempt_id, amount_cents, currency, status, planned, settle_at)
        values (${reference}, '', 0, '', 'canceled', 'succeeded', now())
        on conflict (refund_id) do nothing`;
      const r = await readRefund(reference);
      if (r.status === 'not_found') throw new Error(`simulator: refund ${reference} vanished`);
      return r;
    },
  };
}
