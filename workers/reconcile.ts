import { reconcileExpiries } from '../src/checkout/expiry.ts';
import { reconcileExpiredIntents } from '../src/checkout/intents.ts';
import { settleStuckPayments } from '../src/checkout/settle.ts';
import { reconcileDisputes } from '../src/disputes/service.ts';
import { reconcileCounters } from '../src/payment-links/counters.ts';
import { settleStuckRefunds } from '../src/refunds/settle.ts';
import { reconcileDeliveries } from '../src/webhooks/deliver.ts';
import { reconcileEmails } from '../src/email/send.ts';
import { reconcileReminders } from '../src/invoices/reminders.ts';
import { reconcileDueParts, settleStuckCharges } from '../src/installments/charge.ts';
import { settleStuckSetups } from '../src/checkout/setups.ts';
import { sweepReviews } from '../src/checkout/review.ts';
import { reconcileExports } from '../src/exports/run.ts';
import { runRepairRound } from '../src/repair/guard.ts';
import type { Reconciler, WorkerDefinition } from './types.ts';

/**
 * Every repair pass, in order. Each lives beside the rows it repairs (its component); this list
 * only names and orders them.
 */
export const RECONCILERS: Reconciler[] = [
  { name: 'payment-link-counters', run: (s) => reconcileCounters(s.sql) },
  { name: 'webhook-deliveries', run: reconcileDeliveries },
  // Before expiry: a session whose attempt is settled as declined can then expire in the same pass.
  // The payment participants (s.paymentParticipants) take part in a settled payment here as on the hosted page.
  { name: 'payments-in-flight', run: settleStuckPayments },
  // Setup sessions' cards (a plan's card update) left in flight by a crash: asked again, recorded.
  { name: 'card-setups-in-flight', run: settleStuckSetups },
  // Payments held for review past their deadline are refused; decisions a crash interrupted are finished.
  { name: 'payment-reviews', run: sweepReviews },
  { name: 'checkout-session-expiry', run: reconcileExpiries },
  // After expiry: the intents of expired sessions are cancelled at the processor, or their late charge recorded and refunded.
  { name: 'checkout-intents', run: reconcileExpiredIntents },
  { name: 'refunds-pending', run: settleStuckRefunds },
  // New disputes (a lost sync job), decisions under review, submit/close calls left pending.
  { name: 'disputes', run: reconcileDisputes },
  // Installment charges left in flight by a crash (asked again by payment id, recorded), then parts
  // due whose charge job was lost (Redis flushed): before emails, since a charge may write one.
  { name: 'installment-charges-in-flight', run: settleStuckCharges },
  { name: 'installments-due', run: reconcileDueParts },
  // Reminders due whose job was lost (they write emails), then emails whose send job was lost.
  { name: 'invoice-reminders', run: reconcileReminders },
  { name: 'emails', run: reconcileEmails },
  // Export runs whose job was lost (Redis flushed) or failed by the stall limit (a killed worker).
  { name: 'export-runs', run: reconcileExports },
];

export const reconcileWorker: WorkerDefinition = {
  queue: 'reconcile',
  concurrency: 1,
  schedules: (s) => [{ id: 'reconcile', everyMs: s.config.reconcileIntervalMs, name: 'reconcile' }],
  // Each pass in its own guard (src/repair/guard.ts): one that throws or hangs never keeps the
  // others from running. The job itself always completes, with what each pass did.
  process: (_job, s) => runRepairRound(s, RECONCILERS),
};
