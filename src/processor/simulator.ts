import { createHash } from 'node:crypto';
import { newId } from '../lib/ids.ts';
import type { Sql } from '../db/sql.ts';
import { simulatorDisputes } from './simulator-disputes.ts';
import type { AttemptLookup, ChargeResult, DeclineCode, Processor, RefundLookup } from './types.ts';

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

/**
 * Cards whose charge succeeds but whose later life is scripted, as Stripe's test cards: the
 * behaviour is kept with the simulator's attempt (never the card number) for refunds and disputes.
 */
export type AttemptBehaviour = 'refunds_fail' | 'disputed';
const BEHAVIOURS: Record<string, AttemptBehaviour> = {
  '4000000000005126': 'refunds_fail',
  '4000000000000259': 'disputed',
};

export const DECLINE_MESSAGES: Record<DeclineCode, string> = {
  card_declined: 'Your card was declined.',
  insufficient_funds: 'Your card was declined: insufficient funds.',
  expired_card: 'Your card was declined: the card has expired.',
  incorrect_cvc: 'Your card was declined: the security code (CVC) is incorrect.',
  lost_card: 'Your card was declined.',
  stolen_card: 'Your card was declined.',
  authentication_failed: '3-D Secure authentication failed. Your card was not charged.',
};

const declined = (code: DeclineCode): ChargeResult => ({ status: 'declined', code, message: DECLINE_MESSAGES[code] });

interface AttemptRecord {
  status: 'succeeded' | 'requires_action' | 'declined' | 'not_found';
  code: DeclineCode | null;
  message: string | null;
}

const asResult = (r: AttemptRecord): AttemptLookup =>
  r.status === 'declined'
    ? { status: 'declined', code: r.code!, message: r.message! }
    : r.status === 'requires_action'
      ? { status: 'requires_action', action: 'three_d_secure' }
      : { status: r.status };

/** An attempt closed by a not_found answer is refused if its confirmation arrives after all. */
const asCharge = (r: AttemptRecord): ChargeResult => {
  const res = asResult(r);
  return res.status === 'not_found' || res.status === 'processing' ? declined('card_declined') : res;
};

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

  async function record(intentId: string, attempt: string, r: ChargeResult, behaviour: AttemptBehaviour | null = null): Promise<ChargeResult> {
    const code = r.status === 'declined' ? r.code : null;
    const message = r.status === 'declined' ? r.message : null;
    await sql`
      insert into simulator_attempts (attempt_id, intent_id, status, code, message, behaviour)
      values (${attempt}, ${intentId}, ${r.status}, ${code}, ${message}, ${behaviour})
      on conflict (attempt_id) do nothing`;
    // The first outcome stands: a retried confirmation answers it again.
    const [row] = await sql<AttemptRecord[]>`select status, code, message from simulator_attempts where attempt_id = ${attempt}`;
    return asCharge(row!);
  }

  return {
    name: 'simulator',
    collectsCard: 'server',
    publishableKey: null,
    ...simulatorDisputes(sql),
    async createCustomer({ reference, livemode }) {
      const digest = createHash('sha256').update(`${livemode ? 'live' : 'test'}:${reference}`).digest('hex');
      return { id: `pcus_sim_${digest.slice(0, 24)}` };
    },
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
    async confirmPaymentIntent(intentId, attempt, card) {
      const decline = DECLINES[card.number];
      if (decline) return record(intentId, attempt, declined(decline));
      if (THREE_D_SECURE.has(card.number)) return record(intentId, attempt, { status: 'requires_action', action: 'three_d_secure' });
      return record(intentId, attempt, { status: 'succeeded' }, BEHAVIOURS[card.number] ?? null);
    },
    async completeAuthentication(intentId, attempt, outcome) {
      const r = outcome === 'complete' ? ({ status: 'succeeded' } as const) : declined('authentication_failed');
      const code = r.status === 'declined' ? r.code : null;
      const message = r.status === 'declined' ? r.message : null;
      await sql`
        update simulator_attempts set status = ${r.status}, code = ${code}, message = ${message}, updated_at = now()
        where attempt_id = ${attempt} and intent_id = ${intentId} and status = 'requires_action'`;
      const [row] = await sql<AttemptRecord[]>`
        select status, code, message from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId}`;
      if (!row) throw new Error(`simulator: no attempt ${attempt} on ${intentId}`);
      return asCharge(row);
    },
    async retrieveAttempt(intentId, attempt) {
      // Answering not_found closes the attempt (a tombstone), so a late confirmation cannot charge it.
      await sql`
        insert into simulator_attempts (attempt_id, intent_id, status) values (${attempt}, ${intentId}, 'not_found')
        on conflict (attempt_id) do nothing`;
      const [row] = await sql<AttemptRecord[]>`
        select status, code, message from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId}`;
      return row ? asResult(row) : { status: 'not_found' };
    },
      async createRefund({ reference, intentId, attempt, amount, currency }) {
      // The card's scripted behaviour (4000 0000 0000 5126: refunds fail) was kept with its attempt.
      const [charged] = await sql<{ behaviour: string | null }[]>`
        select behaviour from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId} and status = 'succeeded'`;
      if (!charged) return { status: 'failed', reason: 'charge_not_found' };
      const planned = charged.behaviour === 'refunds_fail' ? 'failed' : 'succeeded';
      await sql`
        insert into simulator_refunds (refund_id, attempt_id, amount_cents, currency, status, planned, settle_at)
        values (${reference}, ${attempt}, ${amount}, ${currency}, 'pending', ${planned},
          now() + make_interval(secs => ${SIMULATOR_REFUND_SETTLE_MS / 1000}))
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
