import { unix } from '../lib/time.ts';
import type { EmailRow } from './store.ts';

const at = (d: Date | null): number | null => (d ? unix(d) : null);

/**
 * An invitation's parts hold a one-time link that lets whoever opens it sign in to the dashboard:
 * the API, whose keys are not dashboard users, never shows them.
 */
const HIDDEN = 'Not shown: an invitation holds a one-time link to the dashboard, for its recipient only.';

/** The email object of GET /v1/emails: what was (or will be) sent, and how its sending went. */
export function presentEmail(row: EmailRow) {
  const hidden = row.template === 'invitation';
  return {
    id: row.id,
    object: 'email' as const,
    livemode: row.livemode,
    to: row.to_address,
    template: row.template,
    subject: row.subject,
    text: hidden ? HIDDEN : row.text_body,
    html: hidden ? HIDDEN : row.html_body,
    status: row.status,
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
export type Email = ReturnType<typeof presentEmail>;
