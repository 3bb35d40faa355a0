import type { Logger } from 'pino';
import type Stripe from 'stripe';
import { recordIntentOutcome } from '../checkout/settle.ts';
import { recordDisputeEvent } from '../disputes/service.ts';
import { requireProcessor } from '../processor/select.ts';
import { asDispute } from '../processor/stripe-objects.ts';
import { askProcessor, recordRefundOutcome } from '../refunds/settle.ts';
import { findRefundById, pendingOfIntent } from '../refunds/store.ts';
import type { Services } from '../services.ts';
import { isHandled, markHandled } from './store.ts';

const idOf = (v: string | { id: string } | null | undefined): string | null => (typeof v === 'string' ? v : (v?.id ?? null));

/** Refunds of ours PENDING on an intent, each asked about and recorded (charge.refunded names the charge, not our refund). */
async function settleRefundsOfIntent(s: Services, intentId: string, livemode: boolean, log: Logger): Promise<void> {
  for (const refund of await pendingOfIntent(s.sql, intentId, livemode)) {
    await recordRefundOutcome(s, refund, await askProcessor(s, refund), log);
  }
}

/**
 * One verified Stripe event. Each is a prompt, not a snapshot to trust: the intent's state is
 * asked of Stripe now (an event for an earlier confirmation may arrive after a later one), then
 * recorded through the same idempotent functions as the return from the page and the sweepers,
 * so any order and any number of copies settle once. Answers whether it was handled (false: a copy
 * already handled, or a type not handled). A thrown error (Stripe or Postgres down) is a 500:
 * Stripe delivers the event again later.
 */
export async function handleStripeEvent(s: Services, event: Stripe.Event, log: Logger): Promise<boolean> {
  if (await isHandled(s.sql, event.id)) return false;
  const livemode = event.livemode;
  const processor = requireProcessor(s, livemode);
  const object = event.data.object as unknown as Record<string, unknown> & { id: string };
  // The types handled below are the ones README "Going live" says to register at Stripe; any other is acknowledged and ignored.
  switch (event.type) {
    // amount_capturable_updated: authorised with manual capture (a payment held for review), held as soon as Stripe says so.
    case 'payment_intent.succeeded':
    case 'payment_intent.amount_capturable_updated':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled': {
      // An off-session charge of an installment plan's later part (metadata payment_id, no session):
      // its job records Stripe's answer to the create call, and the installment sweeper asks again.
      const metadata = (object.metadata ?? {}) as Record<string, string>;
      if (metadata.payment_id && !metadata.checkout_session_id) {
        log.info({ eventId: event.id, paymentId: metadata.payment_id }, 'an installment charge: recorded by its charge job');
        break;
      }
      const result = await processor.retrieveAttempt(object.id, '');
      await recordIntentOutcome(s, object.id, livemode, result, log);
      break;
    }
    case 'charge.refunded': {
      const intentId = idOf(object.payment_intent as string | null);
      if (intentId) await settleRefundsOfIntent(s, intentId, livemode, log);
      break;
    }
    case 'refund.updated':
    case 'refund.failed': {
      const ours = (object.metadata as Record<string, string> | undefined)?.refund_id;
      const refund = ours ? await findRefundById(s.sql, ours) : undefined;
      if (refund && refund.livemode === livemode && refund.status === 'PENDING') await recordRefundOutcome(s, refund, await askProcessor(s, refund), log);
      break;
    }
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.closed':
      await recordDisputeEvent(s, asDispute(event.data.object as Stripe.Dispute), livemode, log);
      break;
    default:
      log.info({ eventId: event.id, type: event.type }, 'Stripe event of a type not handled: acknowledged');
      return false;
  }
  await markHandled(s.sql, event.id, event.type, livemode);
  return true;
}
