import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { attemptOf } from '../../src/processor/stripe-objects.ts';

const intent = (status: string, card: Record<string, unknown> | null) =>
  ({ id: 'pi_1', status, setup_future_usage: null, payment_method: null, last_payment_error: null, latest_charge: { id: 'ch_1', payment_method_details: card ? { card } : null } }) as unknown as Stripe.PaymentIntent;

describe("Stripe's card facts for the fraud rules", () => {
  it("when a charge is read, then the card's fingerprint and country come from the PaymentMethod details, never its number", () => {
    const a = attemptOf(intent('succeeded', { brand: 'visa', last4: '4242', fingerprint: 'Xt5EWLLDS7FJjR1c', country: 'GB' }));
    expect(a).toMatchObject({ status: 'succeeded', charge: 'ch_1', card: { brand: 'visa', last4: '4242', fingerprint: 'Xt5EWLLDS7FJjR1c', country: 'GB' } });
  });

  it('when a payment held for review is authorised (requires_capture), then it reads as charged, for the hold to record', () => {
    expect(attemptOf(intent('requires_capture', { brand: 'visa', last4: '4242', fingerprint: null, country: null })).status).toBe('succeeded');
    expect(attemptOf(intent('processing', null)).status).toBe('processing');
  });
});
