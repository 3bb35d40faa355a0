import { unix } from '../lib/time.ts';
import type { EmailRow } from './store.ts';

const at = (d: Date | null): number | null => (d ? unix(d) : null);

/** The email object of GET /v1/emails: what was (or will be) sent, and how its sending went. */
export function presentEmail(row: EmailRow) {
  return {
    id: row.id,
    object: 'email' as const,
    livemode: row.livemode,
    to: row.to_address,
    template: row.template,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
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
