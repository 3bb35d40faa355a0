import type { Tx } from '../db/tx.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { SessionRow } from './store.ts';

/**
 * How other components take part in a checkout payment without the checkout code knowing them
 * (payment links count payments and enforce quantity_limit here). Every hook runs inside one of the
 * payment's transactions, with the session row locked, never while the processor is called.
 */
export interface PaymentHook {
  /**
   * Before the card is charged, in the transaction that commits the attempt in flight. A string
   * refuses the payment: the payer is not charged and the page shows the string (for example
   * "This link has ended"). Called before a charge is attempted and again before a 3-D Secure
   * challenge is completed, so it must be a check without side effects; what it must hold across
   * the processor call (a link's places) it counts from the attempts in flight.
   */
  beforeCharge(tx: Tx, session: SessionRow): Promise<string | null>;
  /** After the payment SUCCEEDED and the session became COMPLETE, in the same transaction (the one recording the outcome). */
  afterSuccess(tx: Tx, session: SessionRow, payment: PaymentRow): Promise<void>;
}

/** Registered at start-up by the components that need them (push onto this array). */
export const paymentHooks: PaymentHook[] = [];
