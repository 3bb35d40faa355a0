import type { Tx } from '../db/tx.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { CardSetupRow, SessionRow } from './store.ts';

/**
 * How another component takes part in a checkout payment without the checkout code knowing it
 * (payment links count payments and enforce quantity_limit). The list is built once, in the
 * composition root (`Services.paymentParticipants`, built in src/compose.ts), and read from there by
 * pay.ts and settle.ts: the hosted page, the sweeper and any other caller see the same list,
 * whatever routers the process mounted. Every participant runs inside one of the payment's
 * transactions, with the session row locked, never while the processor is called.
 */
export interface PaymentParticipant {
  /** Named in logs and docs. */
  readonly name: string;
  /**
   * Before the card is charged, in the transaction that commits the attempt in flight. A string
   * refuses the payment: the payer is not charged and the page shows the string (for example
   * "This link has ended"). Called before a charge is attempted and again before a 3-D Secure
   * challenge is completed, so it must be a check without side effects; what it must hold across
   * the processor call (a link's places) it counts from the attempts in flight.
   */
  beforeCharge(tx: Tx, session: SessionRow): Promise<string | null>;
  /**
   * Before a payment of a session that names no customer is marked SUCCEEDED, in the transaction
   * that records it: the customer it belongs to, or null. The first participant to name one wins;
   * the payment, the session and their events carry it (an installment plan's first part: the
   * plan's customer, found or made by the payer's email).
   */
  customerOf?(tx: Tx, session: SessionRow, attempt: PaymentRow): Promise<string | null>;
  /** After the payment SUCCEEDED and the session became COMPLETE, in the same transaction (the one recording the outcome). */
  afterSuccess(tx: Tx, session: SessionRow, payment: PaymentRow): Promise<void>;
  /**
   * After a payment made without a checkout session SUCCEEDED (a later part of an installment
   * plan, charged off-session on the card saved with its first part), in the transaction that
   * records it. The payment carries what its plan's first session did (link, invoice, customer).
   * Its charge was agreed with the plan: nothing may refuse it, so there is no beforeCharge.
   */
  afterOffSessionSuccess?(tx: Tx, payment: PaymentRow): Promise<void>;
  /** After a setup session saved a card (the session became COMPLETE), in the same transaction. */
  afterSetup?(tx: Tx, session: SessionRow, setup: CardSetupRow): Promise<void>;
}
