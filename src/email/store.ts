import { lockKey } from '../db/locks.ts';
import type { Db, Sql, TxSql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';
import { keyset } from '../lib/pagination.ts';
import type { ListEmails } from './schema.ts';

export type EmailTemplate =
  | 'receipt'
  | 'refund_notice'
  | 'invoice'
  | 'invoice_reminder'
  | 'invitation'
  | 'portal_link'
  | 'installment_failed'
  | 'installment_defaulted'
  | 'webhook_endpoint_failing'
  | 'webhook_endpoint_disabled';

/**
 * The emails that hold a one-time sign-in link (`token=` and 43 characters): a dashboard invitation,
 * a customer portal link. Their parts are shown to nobody but the recipient (GET /v1/emails hides
 * them), and the link is removed from the stored row once the email has left.
 */
export const ONE_TIME_LINK_TEMPLATES: readonly EmailTemplate[] = ['invitation', 'portal_link', 'installment_failed'];
export type EmailStatus = 'PENDING' | 'SENT' | 'FAILED';

export interface EmailRow {
  id: string;
  account_id: string;
  livemode: boolean;
  to_address: string;
  template: EmailTemplate;
  subject: string;
  text_body: string;
  html_body: string;
  status: EmailStatus;
  attempts: number;
  last_error: string | null;
  transport: 'smtp' | 'log' | null;
  message_id: string | null;
  related_object: string | null;
  dedupe_key: string | null;
  sent_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewEmailRow {
  to_address: string;
  template: EmailTemplate;
  subject: string;
  text_body: string;
  html_body: string;
  related_object: string | null;
  dedupe_key: string | null;
}

/**
 * A new PENDING email; undefined when its dedupe key was already used in this account and mode
 * (within the emails kept: RETENTION_EMAILS_DAYS). The table is partitioned by id, so no index can
 * hold the key unique: writers of one key take turns (src/db/locks.ts) and look for it first.
 */
export async function insertEmail(sql: TxSql, o: Owner, e: NewEmailRow): Promise<EmailRow | undefined> {
  if (e.dedupe_key !== null) {
    await lockKey(sql, 'emails', `${o.accountId}:${o.livemode}:${e.dedupe_key}`);
    const [used] = await sql`
      select 1 from emails where account_id = ${o.accountId} and livemode = ${o.livemode} and dedupe_key = ${e.dedupe_key} limit 1`;
    if (used) return undefined;
  }
  const [row] = await sql<EmailRow[]>`
    insert into emails (id, account_id, livemode, to_address, template, subject, text_body, html_body, related_object, dedupe_key)
    values (${newId('em')}, ${o.accountId}, ${o.livemode}, ${e.to_address}, ${e.template}, ${e.subject}, ${e.text_body},
      ${e.html_body}, ${e.related_object}, ${e.dedupe_key})
    returning *`;
  return row;
}

export async function findEmail(sql: Db, o: Owner, id: string): Promise<EmailRow | undefined> {
  const [row] = await sql<EmailRow[]>`
    select * from emails where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

export async function listEmails(sql: Sql, o: Owner, p: ListEmails): Promise<EmailRow[]> {
  const k = keyset(sql, p);
  return sql<EmailRow[]>`
    select * from emails
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${statusFilter(sql, p.status)}
      ${p.template !== undefined ? sql`and template = ${p.template}` : sql``}
      ${p.related_object !== undefined ? sql`and related_object = ${p.related_object}` : sql``}
      ${p.to !== undefined ? sql`and lower(to_address) = lower(${p.to})` : sql``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

/** The API's status filter on the stored columns: LOGGED is SENT through the log, SENT the rest of SENT. */
function statusFilter(sql: Sql, status: ListEmails['status']) {
  if (status === undefined) return sql``;
  if (status === 'LOGGED') return sql`and status = 'SENT' and transport = 'log'`;
  if (status === 'SENT') return sql`and status = 'SENT' and transport is distinct from 'log'`;
  return sql`and status = ${status}`;
}

/** What the send job needs: the row and the sender name (read when it leaves, so a renamed business shows its new name). */
export type SendContext = EmailRow & { business_name: string | null };

/**
 * Counts one attempt of a PENDING email, before the message leaves, and answers it with the
 * account's business name (the sender name); undefined when it is missing or no longer PENDING.
 */
export async function startAttempt(sql: Sql, id: string): Promise<SendContext | undefined> {
  const [row] = await sql<SendContext[]>`
    update emails e set attempts = e.attempts + 1, updated_at = now()
    from accounts a
    where e.id = ${id} and e.status = 'PENDING' and a.id = e.account_id
    returning e.*, nullif(btrim(a.business_name), '') as business_name`;
  return row;
}

/**
 * The one-time link of an invitation or a portal link (a token of which only the hash is kept
 * elsewhere) is kept in the email's row only until the email has left or has failed for good: then
 * it is removed from both parts.
 */
const SPENT_LINK = 'token=[removed once the email had left]';
const scrubbed = (sql: Sql, column: 'text_body' | 'html_body') =>
  sql`case when template = any(${ONE_TIME_LINK_TEMPLATES as string[]}::text[]) then regexp_replace(${sql(column)}, 'token=[A-Za-z0-9_-]{43}', ${SPENT_LINK}, 'g') else ${sql(column)} end`;

export async function markSent(sql: Sql, id: string, transport: 'smtp' | 'log', messageId: string): Promise<EmailRow | undefined> {
  const [row] = await sql<EmailRow[]>`
    update emails set status = 'SENT', sent_at = now(), transport = ${transport}, message_id = ${messageId},
      last_error = null, updated_at = now(), text_body = ${scrubbed(sql, 'text_body')}, html_body = ${scrubbed(sql, 'html_body')}
    where id = ${id} and status = 'PENDING'
    returning *`;
  return row;
}

/** Records a failed attempt: the email stays PENDING (retried) or, with `final`, becomes FAILED. */
export async function recordFailure(sql: Sql, id: string, error: string, final: boolean): Promise<EmailRow | undefined> {
  const [row] = await sql<EmailRow[]>`
    update emails set last_error = ${error},
      status = ${final ? 'FAILED' : 'PENDING'}, failed_at = ${final ? sql`now()` : null},
      updated_at = now()${final ? sql`, text_body = ${scrubbed(sql, 'text_body')}, html_body = ${scrubbed(sql, 'html_body')}` : sql``}
    where id = ${id} and status = 'PENDING'
    returning *`;
  return row;
}

/**
 * PENDING emails created before `before` (older than the after-commit enqueue could still be
 * running), in id order after `after`: the candidates of the repair pass.
 */
export async function stalePending(sql: Sql, before: Date, after: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from emails
    where status = 'PENDING' and created_at < ${before} and id > ${after}
    order by id limit ${limit}`;
  return rows.map((r) => r.id);
}

/** Of `ids`, those still PENDING (re-read after the job states, closing the race with a job that just finished). */
export async function stillPending(sql: Sql, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`select id from emails where id in ${sql(ids)} and status = 'PENDING'`;
  return rows.map((r) => r.id);
}

/**
 * Who receives a payment's receipt and refund notices: the email recorded on the payment (typed on
 * the hosted page), else the session's customer_email, else the attached customer's email; null
 * when none is known. Read in the caller's transaction (the payment's row as it is being recorded).
 */
export async function paymentRecipient(sql: Db, paymentId: string): Promise<string | null> {
  const [row] = await sql<{ email: string | null }[]>`
    select coalesce(nullif(btrim(p.email), ''), nullif(btrim(cs.customer_email), ''), nullif(btrim(c.email), '')) as email
    from payments p
    left join checkout_sessions cs on cs.id = p.checkout_session_id
    left join customers c on c.id = coalesce(p.customer_id, cs.customer_id)
      and c.account_id = p.account_id and c.livemode = p.livemode
    where p.id = ${paymentId}`;
  return row?.email ?? null;
}

/** The number of the invoice a payment paid, recorded on the payment or its session (null for any other payment). */
export async function invoiceNumberOfPayment(sql: Db, paymentId: string): Promise<string | null> {
  const [row] = await sql<{ number: string | null }[]>`
    select i.number from payments p
    left join checkout_sessions cs on cs.id = p.checkout_session_id
    join invoices i on i.id = coalesce(p.invoice_id, cs.invoice_id) and i.account_id = p.account_id and i.livemode = p.livemode
    where p.id = ${paymentId}`;
  return row?.number ?? null;
}
