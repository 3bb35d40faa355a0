import type { Logger } from 'pino';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import { withTx } from '../db/tx.ts';
import { formatAmount } from '../lib/currency.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';
import { metadataOnCreate } from '../lib/validate.ts';
import { findPayment, lockPayment } from '../payments/store.ts';
import { assertChargesEnabled, processorFor } from '../processor/select.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { scheduleRefundSettle } from './jobs.ts';
import { presentRefund } from './presenter.ts';
import type { CreateRefund } from './schema.ts';
import { callCreate, recordRefundOutcome } from './settle.ts';
import * as store from './store.ts';
import type { RefundRow } from './store.ts';

/** `1500` usd reads `1500 ($15.00)`: the integer the API speaks, and what it means. */
const money = (minor: number, currency: string) => `${minor} (${formatAmount(minor, currency)})`;

/**
 * Transaction 1: under the payment's row lock, checks the payment and what is left to refund,
 * then inserts the refund PENDING with `refund.created`. Concurrent refunds of one payment queue
 * on the lock, so the PENDING and SUCCEEDED refunds never add up to more than the payment.
 */
async function reserve(s: Services, o: Owner, input: CreateRefund, log: Logger, actor: AuditActor): Promise<RefundRow> {
  return withTx(s, log, async (tx) => {
    const payment = isId('pay', input.payment_id) ? await lockPayment(tx.sql, o, input.payment_id) : undefined;
    if (!payment) throw resourceMissing('payment', input.payment_id, 'payment_id');
    assertProcessor(s, o);
    if (payment.status !== 'SUCCEEDED') {
      throw invalidParam('payment_id', `Payment ${payment.id} is ${payment.status}: only a SUCCEEDED payment can be refunded.`);
    }
    if (payment.disputed) {
      throw new ApiError('charge_disputed', `Payment ${payment.id} is disputed: it cannot be refunded while the dispute stands.`, 'payment_id');
    }
    const remaining = payment.amount_cents - (await store.reservedAmount(tx.sql, payment.id));
    if (input.amount === undefined && remaining <= 0) {
      throw invalidParam('payment_id', `Payment ${payment.id} has already been refunded in full (counting refunds still pending).`);
    }
    const amount = input.amount ?? remaining;
    if (amount > remaining) {
      throw invalidParam('amount', `amount ${money(amount, payment.currency)} is more than the ${money(remaining, payment.currency)} left to refund of payment ${payment.id} (pending refunds count as taken).`);
    }
    const refund = await store.insertRefund(tx.sql, o, {
      payment_id: payment.id,
      amount_cents: amount,
      currency: payment.currency,
      reason: input.reason ?? null,
      metadata: metadataOnCreate(input.metadata),
    });
    await recordEvent(tx, s, o.accountId, 'refund.created', presentRefund(refund));
    await recordAudit(tx.sql, {
      accountId: o.accountId,
      livemode: o.livemode,
      actor,
      action: 'refund.created',
      object: { type: 'refund', id: refund.id },
      data: { payment_id: payment.id, amount: amount, currency: payment.currency, reason: refund.reason },
    });
    return refund;
  });
}

/** Live mode without Stripe keys has no processor to refund through: refused before anything is recorded. */
const assertProcessor = (s: Services, o: Owner): void => assertChargesEnabled(s, o.livemode, 'nothing can be refunded');

/**
 * POST /v1/refunds: transaction 1, then the processor call with nothing open or locked, then
 * transaction 2 for a final answer, or the settle job for a pending one. A call that fails leaves
 * the refund PENDING for the sweeper (settle.ts), which asks again.
 */
export async function createRefund(s: Services, o: Owner, input: CreateRefund, log: Logger, actor: AuditActor): Promise<RefundRow> {
  const refund = await reserve(s, o, input, log, actor);
  try {
    const result = await callCreate(s, refund);
    if (result.status === 'pending') {
      await scheduleRefundSettle(s, refund).catch((err: Error) => log.warn({ err: err.message, refundId: refund.id }, 'settle job not enqueued; the sweeper will settle the refund'));
      return refund;
    }
    return await recordRefundOutcome(s, refund, result, log);
  } catch (err) {
    log.error({ err, refundId: refund.id }, 'refund processor call failed; the refund stays PENDING until the sweeper settles it');
    return refund;
  }
}

/**
 * POST /v1/refunds/:id/cancel: the processor decides (a cancel and the refund settling have one
 * winner there), then its answer is recorded. A refund that settled first is recorded as such and
 * the cancel is refused.
 */
export async function cancelRefund(s: Services, o: Owner, id: string, log: Logger): Promise<RefundRow> {
  const refund = await store.findRefund(s.sql, o, id);
  if (!refund) throw resourceMissing('refund', id);
  const notPending = (r: RefundRow) => new ApiError('resource_invalid_state', `Refund ${r.id} is ${r.status}: only a PENDING refund can be cancelled.`);
  if (refund.status !== 'PENDING') throw notPending(refund);
  assertProcessor(s, o);
  const payment = await findPayment(s.sql, o, refund.payment_id);
  let result;
  try {
    result = await processorFor(s, o.livemode)!.cancelRefund(refund.id, payment?.payment_intent_id ?? null);
  } catch (err) {
    log.error({ err, refundId: refund.id }, 'refund cancel call failed');
    throw new ApiError('service_unavailable', 'The processor could not be reached to cancel the refund. Try again.');
  }
  const recorded = await recordRefundOutcome(s, refund, result, log);
  if (recorded.status === 'PENDING') {
    throw new ApiError('resource_invalid_state', `Refund ${refund.id} could not be cancelled at the processor now; it stays PENDING.`);
  }
  if (recorded.status !== 'CANCELLED') throw notPending(recorded);
  return recorded;
}
