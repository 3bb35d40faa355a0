import { UnrecoverableError } from 'bullmq';
import { getBranding } from '../auth/keys.ts';
import { isDatabaseUnavailable } from '../lib/dependencies.ts';
import type { Services } from '../services.ts';
import { revive } from './jobs.ts';
import * as store from './store.ts';
import { isPermanentSendError, scrubError } from './transport.ts';

/**
 * The send job of one email (jobId = email id). The row decides, never the job alone: an email no
 * longer PENDING (sent, failed, or a duplicate job) is left as it is. Otherwise one attempt is
 * counted, the message leaves through `s.mailer` (no transaction open meanwhile), and the outcome
 * is recorded: SENT, or the error, thrown so that BullMQ retries with its backoff. The attempt
 * that reaches EMAIL_MAX_ATTEMPTS, or a rejection the mail server gives as final (5xx to the
 * recipient or the message), makes the email FAILED.
 */
export async function sendEmailJob(s: Services, emailId: string): Promise<string> {
  const row = await store.startAttempt(s.sql, emailId);
  if (!row) return 'skipped (missing or no longer PENDING)';
  const n = row.attempts;
  const log = s.log.child({ job: emailId, emailId });
  let messageId: string;
  try {
    // Read at send time, like the sender name: a support_email changed since the email was queued applies.
    const { support_email } = await getBranding(s.sql, row.account_id);
    ({ messageId } = await s.mailer.send({
      from: { name: row.business_name, address: s.config.email.from },
      replyTo: support_email,
      to: row.to_address,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      emailId,
    }));
  } catch (err) {
    return failed(s, emailId, n, err, log);
  }
  // The message has left: recording it must not be lost to a brief Postgres outage (the job would
  // run again and send it twice), so the write is tried a few times before the job gives up.
  await persist(() => store.markSent(s.sql, emailId, s.mailer.kind, messageId));
  s.metrics.emailsSent.inc({ transport: s.mailer.kind });
  return `sent (attempt ${n}, ${s.mailer.kind})`;
}

/**
 * Records a failed attempt and throws: an Error (BullMQ retries after its backoff), or an
 * UnrecoverableError once the email is FAILED. The library's error is not attached as the cause:
 * only its scrubbed message is kept (stored, logged, shown in Bull Board), never what else it holds.
 */
async function failed(s: Services, emailId: string, n: number, err: unknown, log: Services['log']): Promise<never> {
  const why = scrubError(err instanceof Error ? err.message : String(err), s.config.email.smtpUrl);
  const permanent = isPermanentSendError(err);
  const final = permanent || n >= s.config.email.maxAttempts;
  await persist(() => store.recordFailure(s.sql, emailId, why, final));
  s.metrics.emailSendErrors.inc();
  if (final) s.metrics.emailsFailed.inc();
  const message = `attempt ${n} of email ${emailId} failed: ${why}`;
  if (!final) throw new Error(message);
  log.warn({ attempts: n, permanent }, 'email FAILED');
  throw new UnrecoverableError(`${message}; ${permanent ? 'refused for good by the mail server' : 'no attempts left'}`);
}

const PERSIST_TRIES = 6;

/** Runs a write, waiting out a Postgres outage of a few seconds (0.25 s, doubling: ~8 s in all). */
async function persist<T>(write: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await write();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || i >= PERSIST_TRIES - 1) throw err;
      await new Promise((r) => setTimeout(r, 250 * 2 ** i));
    }
  }
}

/** How old a PENDING email must be before the repair pass looks at it: its after-commit enqueue has had time to run. */
export const RECONCILE_EMAILS_AFTER_MS = 10_000;
const RECONCILE_BATCH = 500;

/**
 * Repair pass: PENDING emails whose job Redis lost (a flush, an enqueue that never happened, a job
 * failed by BullMQ's stall limit or while Postgres was away) are enqueued again. A job that is
 * waiting, delayed for its next retry, or running is left alone. Returns how many were enqueued.
 */
export async function reconcileEmails(s: Services): Promise<number> {
  const before = new Date(Date.now() - RECONCILE_EMAILS_AFTER_MS);
  let after = '';
  let revived = 0;
  for (;;) {
    const ids = await store.stalePending(s.sql, before, after, RECONCILE_BATCH);
    if (ids.length === 0) break;
    const dead = await revive(s, ids, (candidates) => store.stillPending(s.sql, candidates));
    if (dead.length) s.log.warn({ reconciler: 'emails', count: dead.length }, 'emails without a send job were enqueued again');
    revived += dead.length;
    after = ids[ids.length - 1]!;
    if (ids.length < RECONCILE_BATCH) break;
  }
  return revived;
}
