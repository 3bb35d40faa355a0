import { createHash } from 'node:crypto';
import { newId } from '../lib/ids.ts';
import type { ChargeResult, DeclineCode, Processor } from './types.ts';

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

/**
 * The built-in processor. It keeps no state of its own: customer ids are derived from our
 * reference (so a retried job gets the same id, as an idempotency key would give), and the
 * outcome of a charge is decided by the card number alone.
 */
export function createSimulator(): Processor {
  return {
    name: 'simulator',
    async createCustomer({ reference, livemode }) {
      const digest = createHash('sha256').update(`${livemode ? 'live' : 'test'}:${reference}`).digest('hex');
      return { id: `pcus_sim_${digest.slice(0, 24)}` };
    },
    async createPaymentIntent() {
      return { id: newId('pi') };
    },
    async confirmPaymentIntent(_intentId, _attempt, card) {
      const decline = DECLINES[card.number];
      if (decline) return declined(decline);
      if (THREE_D_SECURE.has(card.number)) return { status: 'requires_action', action: 'three_d_secure' };
      return { status: 'succeeded' };
    },
    async completeAuthentication(_intentId, _attempt, outcome) {
      return outcome === 'complete' ? { status: 'succeeded' } : declined('authentication_failed');
    },
  };
}
