import { createHash } from 'node:crypto';
import { newId } from '../lib/ids.ts';
import type { Sql } from '../db/sql.ts';
import type { AttemptLookup, ChargeResult, DeclineCode, Processor } from './types.ts';

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
  return res.status === 'not_found' ? declined('card_declined') : res;
};

/**
 * The built-in processor. Customer ids are derived from our reference (a retried job gets the same
 * id, as an idempotency key would give) and the outcome of a charge is decided by the card number.
 * Intents and attempts are kept in its own tables (simulator_*), written with its own statements
 * and never inside one of our transactions, the way a real processor keeps them on its side: so
 * calls are idempotent (by session id, by payment id) and an attempt can be asked about again
 * after a crash.
 */
export function createSimulator(sql: Sql): Processor {
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
      return { id: row!.id };
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
  };
}
