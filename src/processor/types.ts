/**
 * The card processor seen from the service (DESIGN 7). The service never keeps a card number:
 * it hands the card to the processor for one confirmation and stores only brand and last four.
 */
export interface CardDetails {
  number: string; // digits only
  expMonth: number;
  expYear: number; // four digits
  cvc: string;
  name: string;
}

export type DeclineCode =
  | 'card_declined'
  | 'insufficient_funds'
  | 'expired_card'
  | 'incorrect_cvc'
  | 'lost_card'
  | 'stolen_card'
  | 'authentication_failed';

export type ChargeResult =
  | { status: 'succeeded' }
  | { status: 'requires_action'; action: 'three_d_secure' }
  | { status: 'declined'; code: DeclineCode; message: string };

/** What the processor knows of one attempt: its outcome, or not_found when it never charged it. */
export type AttemptLookup = ChargeResult | { status: 'not_found' };

export interface Processor {
  readonly name: string;
  /** `reference` is our id for the record; a retry with the same reference returns the same customer. */
  createCustomer(input: { reference: string; email: string; name: string; livemode: boolean }): Promise<{ id: string }>;
  /**
   * Created when the payer starts paying; one intent per checkout session, reused across attempts.
   * Idempotent by `reference` (the session id): concurrent or retried calls get the same intent.
   */
  createPaymentIntent(input: {
    reference: string;
    amount: number;
    currency: string;
    customer: string | null;
    livemode: boolean;
  }): Promise<{ id: string }>;
  /**
   * Charges the card for one attempt (`attempt` is our payment id). Idempotent by `attempt`: a
   * retry answers the first outcome and never charges twice.
   */
  confirmPaymentIntent(intentId: string, attempt: string, card: CardDetails): Promise<ChargeResult>;
  /** Finishes an attempt that answered requires_action, once the payer has passed or failed 3-D Secure. */
  completeAuthentication(intentId: string, attempt: string, outcome: 'complete' | 'fail'): Promise<ChargeResult>;
  /**
   * Asks again what became of an attempt whose outcome we did not record (a crash between the call
   * and our second transaction). not_found means the card was never charged, and the processor
   * closes the attempt on that answer, so a confirmation still on its way can no longer charge it.
   */
  retrieveAttempt(intentId: string, attempt: string): Promise<AttemptLookup>;
}
