import { getBranding } from '../auth/keys.ts';
import type { Tx } from '../db/tx.ts';
import type { Owner } from '../lib/owner.ts';
import { enqueueSend, type SendJobDeps } from './jobs.ts';
import { insertEmail, type EmailRow, type EmailTemplate } from './store.ts';
import type { BrandableEmail, EmailBrand, RenderedEmail } from './layout.ts';

/** Who the email is from, as payers see it: the account's business name (null until set). */
export interface Merchant {
  name: string | null;
}

export interface NewEmail {
  to: string;
  template: EmailTemplate;
  /**
   * Rendered once, inside the caller's transaction, with the account's current business name;
   * a template's email (BrandableEmail) is then rendered in the account's colour and logo.
   */
  render: (merchant: Merchant) => RenderedEmail | BrandableEmail;
  /** The payment, refund or invoice the email is about (`pay_…`, `re_…`, `in_…`). */
  relatedObject?: string;
  /** At most one email per key, per account and mode (`receipt:pay_…`): a second call returns null. */
  dedupeKey?: string;
}

/**
 * Writes the email row PENDING in the caller's transaction and, after commit, enqueues its send
 * job without waiting for it (the reconciler enqueues what was lost).
 * Returns null when dedupeKey was already used.
 */
export async function queueEmail(tx: Tx, s: SendJobDeps, owner: Owner, email: NewEmail): Promise<EmailRow | null> {
  const branding = await getBranding(tx.sql, owner.accountId);
  const brand: EmailBrand = { color: branding.brand_color, logoUrl: branding.logo_url };
  const first = email.render({ name: branding.business_name });
  const rendered = 'withBrand' in first && (brand.color || brand.logoUrl) ? first.withBrand(brand) : first;
  const row = await insertEmail(tx.sql, owner, {
    to_address: email.to.trim(),
    template: email.template,
    subject: rendered.subject,
    text_body: rendered.text,
    html_body: rendered.html,
    related_object: email.relatedObject ?? null,
    dedupe_key: email.dedupeKey ?? null,
  });
  if (!row) return null;
  // Not awaited: the request or payment that caused the email does not wait for Redis at all
  // (bench/email.ts); an enqueue that fails is the repair pass's (`reconcileEmails`).
  tx.afterCommit(() => {
    enqueueSend(s, row.id).catch((err: unknown) => s.log.warn({ err, emailId: row.id }, 'email send job not enqueued; the repair pass will enqueue it'));
  });
  return row;
}

/**
 * queueEmail for an email that must never undo the caller's work (a receipt in the transaction
 * that records a payment, a refund notice in a refund's): it runs in a savepoint, and any failure
 * (a rendering bug, a constraint) is logged and rolled back to it, so the work commits without the
 * email. Returns null then.
 */
export async function queueEmailBesides(tx: Tx, s: SendJobDeps, owner: Owner, email: NewEmail): Promise<EmailRow | null> {
  try {
    return await tx.sql.savepoint((sp) => queueEmail({ sql: sp, afterCommit: (h) => tx.afterCommit(h) }, s, owner, email));
  } catch (err) {
    s.log.error({ err, template: email.template, relatedObject: email.relatedObject }, 'could not queue an email; the work it belongs to is recorded without it');
    return null;
  }
}
