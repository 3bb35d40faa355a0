import { z } from 'zod';
import { created, livemode, nullableUnixTime, objectId, objectName, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { EMAIL_STATUSES, EMAIL_TEMPLATES, type EmailApiStatus } from './schema.ts';
import { ONE_TIME_LINK_TEMPLATES, type EmailRow } from './store.ts';

const at = (d: Date | null): number | null => (d ? unix(d) : null);

/**
 * An invitation's or a portal link's parts hold a one-time link that signs whoever opens it in (to
 * the dashboard, to a customer's portal): the API, whose keys are neither, never shows them.
 */
const HIDDEN = 'Not shown: this email holds a one-time sign-in link, for its recipient only.';

/** The email object of GET /v1/emails. */
export const EmailObject = z
  .strictObject({
    id: objectId('em', 'email'),
    object: objectName('email'),
    livemode: livemode(),
    to: z.string().meta({ description: 'The recipient.', example: 'ada@example.com' }),
    template: z.enum(EMAIL_TEMPLATES).meta({ description: 'Which email it is.' }),
    subject: z.string().meta({ description: 'The subject line.' }),
    text: z.string().meta({ description: 'The plain-text part (not shown for an invitation or a portal link).' }),
    html: z.string().meta({ description: 'The HTML part (not shown for an invitation or a portal link).' }),
    status: z.enum(EMAIL_STATUSES).meta({
      description:
        '`PENDING` until it leaves: `SENT` to the mail server of `SMTP_URL`, or `LOGGED` when `SMTP_URL` is unset (written to the service\'s log, received by nobody); `FAILED` when given up (with `last_error`).',
    }),
    attempts: z.number().int().meta({ description: 'Sending attempts made so far.' }),
    last_error: z.string().nullable().meta({ description: 'Why the last attempt failed.' }),
    transport: z
      .enum(['smtp', 'log'])
      .nullable()
      .meta({ description: '`smtp` when sent to the mail server of `SMTP_URL`; `log` when `SMTP_URL` is unset and the email was only logged.' }),
    related_object: z.string().nullable().meta({ description: 'The id of what the email is about: a payment, refund or invoice.' }),
    sent_at: nullableUnixTime('When it left: sent, or (`LOGGED`) written to the log.'),
    failed_at: nullableUnixTime('When it was given up.'),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'email', description: 'An email the service sent, or will send: receipt, refund notice, invoice, reminder, invitation, portal link, installment notices.' });
export type Email = z.infer<typeof EmailObject>;

/** An email's status as the API and the dashboard say it: an email that only went to the log is LOGGED, never SENT. */
export const emailStatus = (row: Pick<EmailRow, 'status' | 'transport'>): EmailApiStatus =>
  row.status === 'SENT' && row.transport === 'log' ? 'LOGGED' : row.status;

/** What the dashboard says beside LOGGED. */
export const LOGGED_NOTE = 'logged (SMTP_URL is unset)';

/** The email object of GET /v1/emails: what was (or will be) sent, and how its sending went. */
export function presentEmail(row: EmailRow): Email {
  const hidden = ONE_TIME_LINK_TEMPLATES.includes(row.template);
  return {
    id: row.id,
    object: 'email',
    livemode: row.livemode,
    to: row.to_address,
    template: row.template,
    subject: row.subject,
    text: hidden ? HIDDEN : row.text_body,
    html: hidden ? HIDDEN : row.html_body,
    status: emailStatus(row),
    attempts: row.attempts,
    last_error: row.last_error,
    transport: row.transport,
    related_object: row.related_object,
    sent_at: at(row.sent_at),
    failed_at: at(row.failed_at),
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
