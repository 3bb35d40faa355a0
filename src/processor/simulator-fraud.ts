import { createHmac } from 'node:crypto';
import type { Sql } from '../db/sql.ts';
import type { CaptureResult, CardDetails, Processor } from './types.ts';

/**
 * Test cards of a few issuing countries (Stripe's international test cards: 4000 00 and the
 * country's ISO 3166 numeric code). Every other card is issued in the US, as 4242 4242 4242 4242.
 * README.md, "Fraud rules", lists them; test/helpers/cards.ts names them for the tests.
 */
export const COUNTRY_CARDS: Record<string, string> = {
  '4000000760000002': 'BR',
  '4000001240000000': 'CA',
  '4000002500000003': 'FR',
  '4000002760000016': 'DE',
  '4000003560000008': 'IN',
  '4000003920000003': 'JP',
  '4000004840008001': 'MX',
  '4000005660000002': 'NG',
  '4000008260000000': 'GB',
};
export const DEFAULT_CARD_COUNTRY = 'US';

/**
 * The simulator's part of fraud rules: a card's fingerprint (an HMAC of the number under the
 * deployment's own key, kept in simulator_fingerprint_key by migration 0040: stable for one card,
 * never the number, not comparable across deployments, as Stripe's card.fingerprint) and country;
 * and manual capture, for payments held for review: authorised, then captured or voided.
 */
export function simulatorFraud(sql: Sql): Pick<Processor, 'cardFacts' | 'capturePayment' | 'voidPayment'> {
  let key: Promise<string> | null = null;
  const keyOf = () => (key ??= sql<{ key: string }[]>`select key from simulator_fingerprint_key`.then(([r]) => {
    if (!r) throw new Error('simulator: no fingerprint key (migration 0040)');
    return r.key;
  }));

  /** Moves a manual-capture attempt to `to` (captured or voided) once; answers where it stands. */
  async function settle(intentId: string, attempt: string, to: 'captured' | 'voided'): Promise<CaptureResult> {
    await sql`
      update simulator_attempts set capture = ${to}, updated_at = now()
      where attempt_id = ${attempt} and intent_id = ${intentId} and status = 'succeeded' and capture = 'manual'`;
    const [row] = await sql<{ status: string; capture: string }[]>`
      select status, capture from simulator_attempts where attempt_id = ${attempt} and intent_id = ${intentId}`;
    if (!row || row.status !== 'succeeded') return 'not_found';
    return row.capture === 'voided' ? 'voided' : 'captured';
  }

  return {
    async cardFacts(card: CardDetails) {
      const digest = createHmac('sha256', await keyOf()).update(card.number).digest('hex');
      return { fingerprint: `fp_${digest.slice(0, 24)}`, country: COUNTRY_CARDS[card.number] ?? DEFAULT_CARD_COUNTRY };
    },
    capturePayment: (intentId, attempt) => settle(intentId, attempt, 'captured'),
    voidPayment: (intentId, attempt) => settle(intentId, attempt, 'voided'),
  };
}
