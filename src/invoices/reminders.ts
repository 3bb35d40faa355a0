import { withTx } from '../db/tx.ts';
import { queueEmail } from '../email/outbox.ts';
import { invoiceReminderEmail } from '../email/templates.ts';
import { ownerOf } from '../lib/owner.ts';
import type { Services } from '../services.ts';
import { scheduleReminder } from './jobs.ts';
import { invoiceEmailData } from './presenter.ts';
import * as store from './store.ts';
import { activePlanOfInvoice } from '../installments/store.ts';

/** The reminder settings (config.invoiceReminders). */
export interface ReminderSettings {
  intervalMs: number;
  limit: number;
}

/**
 * When the first reminder of an invoice is due, planned when it is first sent: none without a
 * due_date or with a limit of 0; at the due date when that is still ahead of the send, else one
 * interval after the send (an invoice sent already overdue is not reminded the moment it arrives).
 */
export function firstReminderAt(sentAt: Date, dueDate: Date | null, r: ReminderSettings): Date | null {
  if (!dueDate || r.limit <= 0) return null;
  return dueDate.getTime() > sentAt.getTime() ? dueDate : new Date(sentAt.getTime() + r.intervalMs);
}

/**
 * After reminder `sent` (counting from 1) went out at `now`: the next one an interval later, or
 * none once the limit is reached. Counted from the send, not from the planned time, so that
 * reminders delayed by an outage are not sent in a burst afterwards.
 */
export function reminderAfter(sent: number, now: Date, r: ReminderSettings): Date | null {
  return sent < r.limit ? new Date(now.getTime() + r.intervalMs) : null;
}

export type ReminderOutcome = 'sent' | 'not_due' | 'ended' | 'missing';

/**
 * The reminder job of one invoice (jobId `reminder-<invoice id>-<n>`, jobs.ts), and the repair
 * pass's step. Under the invoice's row lock: only an OPEN, sent invoice whose next_reminder_at has
 * come and that has had fewer than the limit gets one. The email row (one per invoice and number:
 * its dedupe key), the count and the next date commit together; the next job is enqueued after
 * commit. A duplicate or late job finds next_reminder_at in the future (or null) and does nothing.
 * `dueBy`: the moment a reminder must be due by to go out, now unless the test helpers' advance-time
 * looks ahead; the next reminder is planned from when this one is really sent either way.
 */
export async function sendDueReminder(s: Services, invoiceId: string, dueBy?: Date): Promise<ReminderOutcome> {
  const log = s.log.child({ invoiceId, job: 'invoice-reminder' });
  const settings = s.config.invoiceReminders;
  return withTx(s, log, async (tx) => {
    const row = await store.lockInvoiceById(tx.sql, invoiceId);
    if (!row) return 'missing';
    if (row.status !== 'OPEN' || !row.sent_at || !row.next_reminder_at) return 'ended';
    // Being paid in installments: the plan's own notices speak to the customer.
    if (await activePlanOfInvoice(tx.sql, row.id)) {
      await store.stopReminders(tx.sql, row.id);
      return 'ended';
    }
    const now = new Date();
    if (row.next_reminder_at.getTime() > (dueBy ?? now).getTime()) return 'not_due';
    const o = ownerOf(row);
    const to = await store.billedCustomerEmail(tx.sql, o, row.customer_id);
    if (row.reminder_count >= settings.limit || !to) {
      // The limit was lowered since, or the customer was deleted: nobody to remind.
      await store.stopReminders(tx.sql, row.id);
      if (!to) log.warn({ customerId: row.customer_id }, 'invoice reminder not sent: the customer no longer exists');
      return 'ended';
    }
    const n = row.reminder_count + 1;
    await queueEmail(tx, s, o, {
      to,
      template: 'invoice_reminder',
      render: (m) => invoiceReminderEmail({ ...invoiceEmailData(row, m.name, s.config.invoiceUrl), reminder: n }),
      relatedObject: row.id,
      dedupeKey: `invoice_reminder:${row.id}:${n}`,
    });
    const updated = await store.recordReminder(tx.sql, row.id, reminderAfter(n, now, settings));
    if (updated.next_reminder_at) tx.afterCommit(() => scheduleReminder(s, updated));
    return 'sent';
  });
}

/** How long past next_reminder_at the repair pass leaves an invoice to its own job. */
export const REMINDER_GRACE_MS = 5_000;
const RECONCILE_BATCH = 200;

/** Repair pass: OPEN invoices whose reminder is due and whose job Redis lost (or that failed for good). */
export async function reconcileReminders(s: Services): Promise<number> {
  const ids = await store.dueReminders(s.sql, new Date(Date.now() - REMINDER_GRACE_MS), RECONCILE_BATCH);
  const log = s.log.child({ reconciler: 'invoice-reminders' });
  let sent = 0;
  for (const id of ids) {
    try {
      if ((await sendDueReminder(s, id)) === 'sent') sent++;
    } catch (err) {
      // One invoice that fails must not stop the others, nor the passes after this one.
      log.error({ err, invoiceId: id }, 'could not send a due invoice reminder; the next pass tries again');
    }
  }
  if (sent) log.warn({ sent }, 'sent invoice reminders whose job was lost');
  return sent;
}
