import { z } from 'zod';
import { ApiError, invalidParam } from '../lib/errors.ts';
import { text } from '../lib/validate.ts';
import { emailProblem, luhn } from '../processor/cards.ts';

/**
 * What a test payment does, named rather than given as a card number (docs/decisions.md, "Test
 * helpers"). Each is one of the simulator's test cards (DESIGN 7), paid through the hosted page's
 * code; the 3-D Secure ones then pass or fail the challenge as the page's authenticate step does.
 */
export const PAY_SCENARIOS = [
  'succeeded',
  'declined',
  'insufficient_funds',
  'expired_card',
  'incorrect_cvc',
  'lost_card',
  'stolen_card',
  'requires_3ds',
  'requires_3ds_then_success',
  'requires_3ds_then_failure',
  'disputed',
  'refund_fails',
  'refund_pending',
] as const;
export type PayScenario = (typeof PAY_SCENARIOS)[number];

/** A card number as the hosted page's form takes it: 12 to 19 digits passing the Luhn check, spaces or hyphens between them allowed. */
const cardNumber = text(40)
  .transform((v) => v.replace(/[\s-]/g, ''))
  .refine((v) => /^\d{12,19}$/.test(v) && luhn(v), 'must be a card number of 12 to 19 digits that passes the Luhn check, such as 4242 4242 4242 4242');

/** POST /v1/test-helpers/checkout/sessions/:id/pay: exactly one of card or scenario (payMethod). */
export const PaySession = z.strictObject({
  card: cardNumber.optional(),
  scenario: z.enum(PAY_SCENARIOS, { error: `must be one of ${PAY_SCENARIOS.join(', ')}` }).optional(),
  email: text(254)
    .transform((v) => v.trim())
    .refine((v) => emailProblem(v) === null, 'must be a valid email address')
    .optional(),
  name: text(200)
    .transform((v) => v.trim().replace(/\s+/g, ' '))
    .refine((v) => v.length > 0, 'must not be empty')
    .optional(),
});
export type PaySession = z.infer<typeof PaySession>;

/** The card of a PaySession, or the scenario: exactly one of them, else a 400 naming the field. */
export function payMethod(input: PaySession): { card: string } | { scenario: PayScenario } {
  if (input.card !== undefined && input.scenario !== undefined) {
    throw invalidParam('scenario', 'Give either card or scenario, not both.');
  }
  if (input.card !== undefined) return { card: input.card };
  if (input.scenario !== undefined) return { scenario: input.scenario };
  throw new ApiError('parameter_missing', `Missing required param: card (a test card number) or scenario (one of ${PAY_SCENARIOS.join(', ')}).`, 'card');
}

/** POST /v1/test-helpers/checkout/sessions/:id/expire takes no parameters. */
export const ExpireSessionNow = z.strictObject({});

/** The longest advance-time: 90 days (sessions live 24 hours at most; reminders come every few days). */
export const MAX_ADVANCE_SECONDS = 90 * 24 * 3600;

/** POST /v1/test-helpers/advance-time. */
export const AdvanceTime = z.strictObject({
  seconds: z
    .number({ error: 'must be a whole number of seconds' })
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1')
    .max(MAX_ADVANCE_SECONDS, `must be at most ${MAX_ADVANCE_SECONDS} (90 days)`),
});
export type AdvanceTime = z.infer<typeof AdvanceTime>;

/** Stripe's dispute reasons. */
export const DISPUTE_REASONS = [
  'bank_cannot_process',
  'credit_not_processed',
  'customer_initiated',
  'debit_not_authorized',
  'duplicate',
  'fraudulent',
  'general',
  'incorrect_account_details',
  'insufficient_funds',
  'product_not_received',
  'product_unacceptable',
  'subscription_canceled',
  'unrecognized',
] as const;

/** POST /v1/test-helpers/payments/:id/dispute; `reason` defaults to fraudulent, as card 0259's. */
export const DisputePayment = z.strictObject({
  reason: z.enum(DISPUTE_REASONS, { error: `must be one of ${DISPUTE_REASONS.join(', ')}` }).optional(),
});
export type DisputePayment = z.infer<typeof DisputePayment>;
