import type { Tx } from '../db/tx.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { SessionRow } from './store.ts';

/**
 * How other components take part in a checkout payment without the checkout code knowing them
 * (payment links count payments and enforce quantity_limit here). Every hook runs inside the
 * payment's transaction, with the session row locked.
 */
export interface PaymentHook {
  /**
   * Before the card is charged. A string refuses the payment: the payer is not charged and the
   * page shows the string (for example "This link has ended"). Called before a charge is
   * attempted and again in the transaction that completes a 3-D Secure payment, so it must be a
   * check without side effects.
   */
  beforeCharge(tx: Tx, session: SessionRow): Promise<string | null>;
  /** After the payment SUCCEEDED and the session became COMPLETE, in the same transaction. */
  afterSuccess(tx: Tx, session: SessionRow, payment: PaymentRow): Promise<void>;
}

/** Registered at start-up by the components that need them (push onto this array). */
export const paymentHooks: PaymentHook[] = [];
