import { within } from '../queue/bound.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';
import type { InvoiceRow } from './store.ts';

// What invoices enqueue: one delayed job per reminder due, at the invoice's next_reminder_at.
// The handler is reminders.ts (sendDueReminder); the worker is workers/invoices.ts.

export interface ReminderJobData {
  invoiceId: string;
}

/**
 * The job id of reminder `n` (counting from 1) of an invoice. BullMQ refuses a ':' in a custom id,
 * hence the dashes. Adding the same reminder twice is a no-op.
 */
export const reminderJobId = (invoiceId: string, n: number): string => `reminder-${invoiceId}-${n}`;

/**
 * Schedules the next reminder of `row` (its next_reminder_at; nothing when none is planned).
 * Bounded: the caller may answer a request, and the `invoice-reminders` repair pass sends a
 * reminder whose job never made it to Redis.
 */
export async function scheduleReminder(s: Services, row: Pick<InvoiceRow, 'id' | 'reminder_count' | 'next_reminder_at'>): Promise<void> {
  if (!row.next_reminder_at) return;
  const data: ReminderJobData = { invoiceId: row.id };
  await within(
    s.queues.get(QUEUE_NAMES.invoices).add('reminder', data, {
      jobId: reminderJobId(row.id, row.reminder_count + 1),
      delay: Math.max(0, row.next_reminder_at.getTime() - Date.now()),
    }),
  );
}
