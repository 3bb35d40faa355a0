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

/** What the fraud rules may know of a card: its fingerprint at the processor and issuing country (ISO 3166 alpha-2). */
export interface CardFacts {
  fingerprint: string | null;
  country: string | null;
}

/** What a confirmation token says of its card before the charge (all null for a payment method that is not a card). */
export interface TokenCard extends CardFacts {
  brand: string | null;
  last4: string | null;
}

/** The answer to a server-side confirmation with a token: the attempt's outcome, and the client secret when the payer's browser must act (3-D Secure). */
export type TokenConfirmation = AttemptLookup & { clientSecret?: string | null };

/** Where an authorisation held for review ended: captured, voided, or not_found (never authorised). */
export type CaptureResult = 'captured' | 'voided' | 'not_found';

export type DeclineCode =
  | 'card_declined'
  | 'insufficient_funds'
  | 'expired_card'
  | 'incorrect_cvc'
  | 'lost_card'
  | 'stolen_card'
  | 'authentication_failed'
  /** An off-session charge the bank wants the cardholder present for (3-D Secure): the card must be confirmed again on a page. */
  | 'authentication_required';

export type ChargeResult =
  | { status: 'succeeded' }
  | { status: 'requires_action'; action: 'three_d_secure' }
  | { status: 'declined'; code: DeclineCode; message: string };

/**
 * What the processor knows of one attempt: its outcome, not_found when it never charged it, or
 * processing when it has no final answer yet (Stripe: the intent is processing, awaits 3-D Secure
 * in the payer's browser or its confirmation): the attempt stays in flight. A charged answer may
 * carry the card's brand and last four (Stripe's Payment Element: the service never saw the card).
 */
export type AttemptLookup = (ChargeResult | { status: 'not_found' } | { status: 'processing' }) & {
  card?: { brand: string; last4: string; fingerprint?: string | null; country?: string | null } | null;
  /** The processor's charge the answer is about (its last confirmation), where it has charges. */
  charge?: string | null;
  /**
   * The reusable card the processor kept when the attempt asked to save it (`saveCard`: the first
   * part of an installment plan), for later off-session charges. Only its id at the processor.
   */
  paymentMethod?: string | null;
};

/** A confirmation's answer, with the card kept at the processor when it was asked to (saveCard). */
export type ChargeAnswer = ChargeResult & { paymentMethod?: string | null };

/**
 * An off-session charge of a saved card (a later part of an installment plan): its outcome, or
 * processing when the processor has no final answer yet. `intentId` is the processor's intent of
 * the charge (refunds go through it); the card's brand and last four where the processor says.
 */
export type SavedCardCharge = (ChargeResult | { status: 'processing' }) & {
  intentId: string | null;
  card?: { brand: string; last4: string } | null;
};

/** A card saved without a charge (a setup session: a plan's new card), or the answer on the way to it. */
export type SetupResult =
  | { status: 'succeeded'; paymentMethod: string; card: { brand: string; last4: string } | null }
  | { status: 'requires_action'; action: 'three_d_secure' }
  | { status: 'declined'; code: DeclineCode; message: string };

/** What the processor knows of a setup: its outcome, not_found when it never saw it (then closed), or processing. */
export type SetupLookup = SetupResult | { status: 'not_found' } | { status: 'processing' };

/**
 * A refund as the processor sees it. `pending` is the usual first answer: card refunds settle
 * later, and the service asks again (retrieveRefund) from a job.
 */
export type RefundResult =
  | { status: 'pending' }
  | { status: 'succeeded' }
  | { status: 'failed'; reason: string }
  | { status: 'canceled' };

/** What the processor knows of a refund: its state, or not_found when it was never asked for it. */
export type RefundLookup = RefundResult | { status: 'not_found' };

/** A dispute (chargeback) as the processor reports it; `attempt` is our payment id. */
export interface ProcessorDispute {
  id: string;
  attempt: string;
  amount: number;
  currency: string;
  reason: string;
  status: 'needs_response' | 'under_review' | 'won' | 'lost';
  evidenceDueBy: Date;
  created: Date;
}

export interface Processor {
  readonly name: string;
  /**
   * Who collects the card: 'server', the service's own form posts it to the service (the
   * simulator); 'element', Stripe's Payment Element in the payer's browser sends it to Stripe and
   * the service never sees it (confirmPaymentIntent is then never used).
   */
  readonly collectsCard: 'server' | 'element';
  /** The key the browser's Stripe.js is given ('element'); null for the simulator. */
  readonly publishableKey: string | null;
  /** `reference` is our id for the record; a retry with the same reference returns the same customer. */
  createCustomer(input: { reference: string; email: string; name: string; livemode: boolean }): Promise<{ id: string }>;
  /**
   * The processor's customer of a reference when making it needs no call (the simulator derives it
   * from the reference): the customer's insert then records it, and the sweep of
   * src/processor/customers.ts has nothing to do. Absent where a call is needed (Stripe).
   */
  customerIdOf?(reference: string, livemode: boolean): string;
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
    /**
     * Keep the card for later off-session charges (the first part of an installment plan): the
     * simulator makes a reusable token, Stripe gets `setup_future_usage: off_session`.
     */
    saveCard?: boolean;
  }): Promise<{ id: string; clientSecret: string | null }>;
  /**
   * Cancels the session's intent (the session expired), so it can no longer be confirmed.
   * Idempotent: an intent already cancelled, or already succeeded (then the answer is false and
   * the late success is settled by its event or the sweep), is left as it is.
   */
  cancelPaymentIntent(intentId: string): Promise<boolean>;
  /** The intent's client secret for the browser ('element'); null for the simulator. Never logged, never in the API. */
  paymentIntentSecret(intentId: string): Promise<string | null>;
  /**
   * Charges the card for one attempt (`attempt` is our payment id). Idempotent by `attempt`: a
   * retry answers the first outcome and never charges twice.
   */
  confirmPaymentIntent(intentId: string, attempt: string, card: CardDetails, opts?: { saveCard?: boolean; captureLater?: boolean }): Promise<ChargeAnswer>;
  /**
   * A card's stable fingerprint and issuing country, for the fraud rules, before it is charged
   * (a card collected by the service's own form: the simulator). Never the number.
   */
  cardFacts?(card: CardDetails): Promise<CardFacts>;
  /**
   * Captures an attempt confirmed with `captureLater` (a payment held for review, approved).
   * Idempotent: answers `captured` again, or `voided` when it was voided first.
   */
  capturePayment(intentId: string, attempt: string): Promise<CaptureResult>;
  /** Makes the intent's next confirmation in the browser authorise only (capture_method manual): a page without a token, held for review. */
  setManualCapture?(intentId: string): Promise<void>;
  /**
   * The card behind a confirmation token the payer's browser made from the Payment Element
   * ('element': Stripe's ConfirmationToken), read before any charge so that the fraud rules see
   * it: brand, last four, fingerprint and issuing country, never the number. `invalid` when the
   * token is unknown in this mode, expired or already used (the page makes a new one).
   */
  cardOfToken?(token: string): Promise<{ status: 'ok'; card: TokenCard } | { status: 'invalid' }>;
  /**
   * Confirms the session's intent on the server with the payer's confirmation token ('element':
   * Stripe's "finalize payments on the server"), for attempt `attempt` (idempotent by it).
   * `captureLater` authorises only (a payment held for review); `returnUrl` is where a 3-D Secure
   * redirect comes back. When the bank asks for 3-D Secure the answer is `processing` with
   * `clientSecret`, for the browser's `stripe.handleNextAction`; the attempt stays in flight.
   */
  confirmWithToken?(intentId: string, attempt: string, token: string, opts: { captureLater: boolean; returnUrl: string }): Promise<TokenConfirmation>;
  /** Releases an uncaptured authorisation (a review refused or expired). Idempotent, as capturePayment. */
  voidPayment(intentId: string, attempt: string): Promise<CaptureResult>;
  /** Finishes an attempt that answered requires_action, once the payer has passed or failed 3-D Secure. */
  completeAuthentication(intentId: string, attempt: string, outcome: 'complete' | 'fail'): Promise<ChargeAnswer>;
  /**
   * Charges a card the processor kept (`paymentMethod`, saved by an earlier confirmation) with the
   * cardholder absent: a later part of an installment plan. Idempotent by `reference` (our payment
   * id): asked again, it answers the first charge's outcome and never charges twice, so the
   * sweeper may simply ask again after a crash. `customer` is the processor's customer (Stripe
   * keeps saved cards on one); null where the processor needs none (the simulator). `again`: the
   * charge may have reached the processor before (the sweeper asking after a crash), so a
   * processor that cannot rely on its idempotency alone looks for it first; a first call does not.
   */
  chargeSavedCard(input: {
    reference: string;
    again?: boolean;
    customer: string | null;
    paymentMethod: string;
    amount: number;
    currency: string;
    livemode: boolean;
    description: string | null;
  }): Promise<SavedCardCharge>;
  /**
   * Saves a card without charging it (a setup session: the new card of an installment plan).
   * Idempotent by `reference` (our card setup id); may ask for 3-D Secure first.
   */
  setupCard(reference: string, card: CardDetails, livemode: boolean): Promise<SetupResult>;
  /** Finishes a setup that answered requires_action, once the cardholder passed or failed 3-D Secure. */
  completeSetupAuthentication(reference: string, outcome: 'complete' | 'fail'): Promise<SetupResult>;
  /** What became of a setup (the sweeper, after a crash); not_found closes it, as retrieveAttempt does. */
  retrieveSetup(reference: string): Promise<SetupLookup>;
  /**
   * Asks again what became of an attempt whose outcome we did not record (a crash between the call
   * and our second transaction). not_found means the card was never charged, and the processor
   * closes the attempt on that answer, so a confirmation still on its way can no longer charge it.
   */
  retrieveAttempt(intentId: string, attempt: string): Promise<AttemptLookup>;
  /**
   * Refunds part or all of a charged attempt (`attempt`, our payment id, on intent `intentId`).
   * Idempotent by `reference` (our refund id): a retry answers the same refund and never refunds twice.
   */
  createRefund(input: { reference: string; intentId: string; attempt: string; amount: number; currency: string }): Promise<RefundResult>;
  /** The refund's state now (`reference` is our refund id; `intentId` the refunded payment's intent, where Stripe files it). */
  retrieveRefund(reference: string, intentId: string | null): Promise<RefundLookup>;
  /**
   * Cancels a refund still pending at the processor, which arbitrates a cancel against the refund
   * settling: the answer is `canceled` when the cancel won, else the state the refund ended in. A
   * refund it never saw is recorded cancelled, so a createRefund arriving later answers `canceled`.
   */
  cancelRefund(reference: string, intentId: string | null): Promise<RefundResult>;
  /**
   * Disputes the processor opened, oldest first by (created, id): those created at or after
   * `since`, after the dispute `startingAfter` when given (its next page). Read by the sync.
   */
  listDisputes(page: { since: Date | null; startingAfter: string | null; limit: number }): Promise<ProcessorDispute[]>;
  /** One dispute now (a decision may have been made since it was last asked about); null when unknown. */
  retrieveDispute(id: string): Promise<ProcessorDispute | null>;
  /** Sends the evidence and asks for a decision. Idempotent: a dispute already submitted or closed answers as it is. */
  submitDisputeEvidence(id: string, evidence: Record<string, string>): Promise<ProcessorDispute>;
  /** Accepts the loss. Idempotent: a dispute already closed answers as it is. */
  closeDispute(id: string): Promise<ProcessorDispute>;
  /**
   * Test helpers only (`POST /v1/test-helpers/payments/:id/dispute`): the cardholder disputes the
   * charged attempt `attempt` (our payment id) now, as card 4000 0000 0000 0259 has it disputed a
   * moment after the charge. Idempotent by attempt: one dispute per charge, an existing one is
   * answered as it is, with `opened` false (true for the call that opened it). Null when the
   * processor never charged that attempt. Only the simulator has it: Stripe opens test disputes
   * only for its disputed test cards.
   */
  openDispute?(input: { attempt: string; amount: number; reason: string }): Promise<{ dispute: ProcessorDispute; opened: boolean } | null>;
}
