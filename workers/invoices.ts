import type { ReminderJobData } from '../src/invoices/jobs.ts';
import { sendDueReminder } from '../src/invoices/reminders.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * Invoice reminders: one delayed job per reminder due (jobId `reminder-<invoice id>-<n>`,
 * src/invoices/jobs.ts), handled by sendDueReminder (src/invoices/reminders.ts), idempotent: a
 * duplicate or late job finds the reminder not due, or the invoice no longer OPEN, and does
 * nothing. Its repair pass is `reconcileReminders` (workers/reconcile.ts).
 */
export const invoicesWorker: WorkerDefinition<ReminderJobData> = {
  queue: 'invoices',
  concurrency: 5,
  process: (job, s) => sendDueReminder(s, job.data.invoiceId),
};
