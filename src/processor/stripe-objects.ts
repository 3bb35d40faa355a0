import type Stripe from 'stripe';
import type { AttemptLookup, DeclineCode, ProcessorDispute, RefundResult, SavedCardCharge } from './types.ts';
import { DECLINE_MESSAGES } from './simulator.ts';

// What Stripe's objects say, in the processor's terms: pure functions over Stripe's types only, so
// that the processor-events component reads a dispute without loading stripe-node (src/processor/
// stripe.ts, the client, is loaded only where Stripe keys are set: src/compose.ts).

/** Stripe's failure codes (last_payment_error.decline_code, then .code) as ours. */
const DECLINES: Record<string, DeclineCode> = {
  insufficient_funds: 'insufficient_funds',
  expired_card: 'expired_card',
  incorrect_cvc: 'incorrect_cvc',
  invalid_cvc: 'incorrect_cvc',
  lost_card: 'lost_card',
  stolen_card: 'stolen_card',
  payment_intent_authentication_failure: 'authentication_failed',
  // Off-session: the bank wants the cardholder present (the plan's card must be confirmed again).
  authentication_required: 'authentication_required',
};

const CANCELED_MESSAGE = 'The payment was cancelled before it completed. Your card was not charged.';

export function declineOf(err: { decline_code?: string | undefined; code?: string | undefined } | null): { code: DeclineCode; message: string } {
  const code = (err?.decline_code && DECLINES[err.decline_code]) || (err?.code && DECLINES[err.code]) || 'card_declined';
  // Our own messages: Stripe's may name the reason a lost or stolen card was refused, which a payer must not learn.
  return { code, message: DECLINE_MESSAGES[code] };
}

const DISPUTE_STATUS: Record<string, ProcessorDispute['status']> = {
  warning_needs_response: 'needs_response',
  needs_response: 'needs_response',
  warning_under_review: 'under_review',
  under_review: 'under_review',
  won: 'won',
  warning_closed: 'won', // an inquiry closed without a chargeback: the money stays
  prevented: 'won',
  lost: 'lost',
};

export const idOf = (v: string | { id: string } | null | undefined): string => (typeof v === 'string' ? v : (v?.id ?? ''));

export function asDispute(d: Stripe.Dispute): ProcessorDispute {
  return {
    id: d.id,
    // Stripe knows our payment by its intent; disputes/store.ts finds the SUCCEEDED payment of that intent.
    attempt: idOf(d.payment_intent) || idOf(d.charge),
    amount: d.amount,
    currency: d.currency,
    reason: d.reason,
    status: DISPUTE_STATUS[d.status] ?? 'needs_response',
    evidenceDueBy: new Date((d.evidence_details?.due_by ?? d.created) * 1000),
    created: new Date(d.created * 1000),
  };
}

export function asRefund(r: Stripe.Refund): RefundResult {
  switch (r.status) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'failed':
      return { status: 'failed', reason: r.failure_reason ?? 'declined' };
    case 'canceled':
      return { status: 'canceled' };
    default: // pending, requires_action: Stripe is still at it
      return { status: 'pending' };
  }
}

/** What a PaymentIntent says of the attempt being paid with it (AttemptLookup). */
export function attemptOf(pi: Stripe.PaymentIntent): AttemptLookup {
  const charge = typeof pi.latest_charge === 'string' ? pi.latest_charge : (pi.latest_charge?.id ?? null);
  return { ...outcomeOf(pi), charge };
}

function outcomeOf(pi: Stripe.PaymentIntent): AttemptLookup {
  switch (pi.status) {
    // requires_capture: authorised only, held for a review (capture_method manual); captured when approved.
    case 'requires_capture':
    case 'succeeded': {
      const charge = typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
      const card = charge?.payment_method_details?.card;
      // The card Stripe kept (setup_future_usage): the plan's card for its later parts.
      const paymentMethod = pi.setup_future_usage ? idOf(pi.payment_method) || null : null;
      // Stripe's own fingerprint and issuing country of the card, for the fraud rules (src/fraud).
      const facts = card ? { fingerprint: card.fingerprint ?? null, country: card.country ?? null } : {};
      return { status: 'succeeded', card: card ? { brand: card.brand ?? 'unknown', last4: card.last4 ?? '', ...facts } : null, paymentMethod };
    }
    case 'requires_payment_method':
      // Declined (the error of the last confirmation), or never confirmed: not charged.
      return pi.last_payment_error ? { status: 'declined', ...declineOf(pi.last_payment_error) } : { status: 'not_found' };
    case 'canceled':
      return { status: 'declined', code: 'card_declined', message: CANCELED_MESSAGE };
    default: // processing, requires_action (3-D Secure in the payer's browser), requires_confirmation
      return { status: 'processing' };
  }
}

/** What an off-session PaymentIntent says of the charge (chargeSavedCard). */
export function savedChargeOf(pi: Stripe.PaymentIntent): SavedCardCharge {
  const outcome = outcomeOf(pi);
  const intentId = pi.id;
  if (outcome.status === 'succeeded') return { status: 'succeeded', intentId, card: outcome.card ?? null };
  if (outcome.status === 'declined') return { ...outcome, intentId };
  // requires_action off-session: the bank wants the cardholder, who is not there.
  if (pi.status === 'requires_action') return { status: 'declined', ...declineOf({ code: 'authentication_required' }), intentId };
  if (outcome.status === 'not_found') return { status: 'declined', ...declineOf(null), intentId };
  return { status: 'processing', intentId };
}
