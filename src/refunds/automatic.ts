import type { Logger } from 'pino';
import type { Tx } from '../db/tx.ts';
import { ownerOf } from '../lib/owner.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { scheduleRefundSettle } from './jobs.ts';
import { presentRefund } from './presenter.ts';
import * as store from './store.ts';

/** Why the service refunded a payment by itself, in the refund's metadata (`automatic_refund`). */
export type AutomaticRefundCause = 'checkout_session_expired' | 'checkout_session_not_payable';

/**
 * A charge the service cannot keep (Stripe charged an intent after its session expired, or a
 * participant refuses it): refunded in full, with no merchant request. The refund is committed
 * PENDING with `refund.created` in the caller's transaction (which records the payment), and its
 * settle job asks the processor after commit: it finds no refund there and creates it, idempotent
 * by our refund id; the refunds-pending sweeper does the same if the job is lost. `reason` is
 * null (none of the API's three fits); metadata.automatic_refund says why (docs/decisions.md).
 */
export async function refundAutomatically(tx: Tx, s: Services, payment: PaymentRow, cause: AutomaticRefundCause, log: Logger): Promise<void> {
  const o = ownerOf(payment);
  const refund = await store.insertRefund(tx.sql, o, {
    payment_id: payment.id,
    amount_cents: payment.amount_cents,
    currency: payment.currency,
    reason: null,
    metadata: { automatic_refund: cause },
  });
  await recordEvent(tx, s, o.accountId, 'refund.created', presentRefund(refund));
  log.warn({ paymentId: payment.id, refundId: refund.id, cause }, 'a charge the service cannot keep is refunded automatically');
  tx.afterCommit(() => scheduleRefundSettle(s, refund));
}
