import type { Db, Sql, TxSql } from '../db/sql.ts';
import { emptyFragment } from '../lib/fragments.ts';
import { customerOf, keyset } from '../lib/pagination.ts';
import type { LineItem, ListSessions } from './schema.ts';
import type { Owner } from '../lib/owner.ts';
import type { InstallmentChoice } from '../lib/installments.ts';

export interface SessionRow {
  id: string;
  account_id: string;
  livemode: boolean;
  status: 'OPEN' | 'COMPLETE' | 'EXPIRED';
  payment_status: 'unpaid' | 'paid' | 'no_payment_required';
  amount_cents: number;
  currency: string;
  success_url: string;
  cancel_url: string | null;
  customer_id: string | null;
  customer_email: string | null;
  line_items: LineItem[] | null;
  description: string | null;
  metadata: Record<string, string>;
  payment_intent_id: string | null;
  payment_id: string | null;
  payment_link_id: string | null;
  link_source: string | null;
  /** The invoice this session pays (the hosted invoice page's Pay); null otherwise. */
  invoice_id: string | null;
  /** `setup`: the session saves a card without charging (a plan's card update); amount_cents is 0. */
  mode: 'payment' | 'setup';
  /** The installment plan chosen on the page (this is its first part), or the plan whose card a setup session replaces. */
  installment: InstallmentChoice | null;
  expires_at: Date;
  completed_at: Date | null;
  expired_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A card setup (`seti_…`): one press of "Save card" on a setup session, recorded as a payment attempt is (setups.ts). */
export interface CardSetupRow {
  id: string;
  account_id: string;
  livemode: boolean;
  checkout_session_id: string;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  next_action: string | null;
  processing_since: Date | null;
  email: string | null;
  billing_name: string | null;
  card_brand: string | null;
  card_last4: string | null;
  /** The card's reusable id at the processor, once saved. */
  processor_payment_method: string | null;
  failure_code: string | null;
  failure_message: string | null;
  created_at: Date;
  updated_at: Date;
}

export type NewSession = Pick<
  SessionRow,
  | 'id' | 'amount_cents' | 'currency' | 'success_url' | 'cancel_url' | 'customer_id' | 'customer_email'
  | 'line_items' | 'description' | 'metadata' | 'payment_link_id' | 'link_source' | 'expires_at' | 'created_at'
> & { invoice_id?: string | null; mode?: SessionRow['mode']; installment?: InstallmentChoice | null };

export async function insertSession(sql: Db, o: Owner, s: NewSession): Promise<SessionRow> {
  const mode = s.mode ?? 'payment';
  const [row] = await sql<SessionRow[]>`
    insert into checkout_sessions (id, account_id, livemode, amount_cents, currency, success_url, cancel_url,
      customer_id, customer_email, line_items, description, metadata, payment_link_id, link_source,
      invoice_id, expires_at, created_at, updated_at, mode, payment_status, installment)
    values (${s.id}, ${o.accountId}, ${o.livemode}, ${s.amount_cents}, ${s.currency}, ${s.success_url}, ${s.cancel_url},
      ${s.customer_id}, ${s.customer_email}, ${s.line_items ? sql.json(s.line_items) : null}, ${s.description},
      ${sql.json(s.metadata)}, ${s.payment_link_id}, ${s.link_source}, ${s.invoice_id ?? null}, ${s.expires_at}, ${s.created_at}, ${s.created_at},
      ${mode}, ${mode === 'setup' ? 'no_payment_required' : 'unpaid'}, ${s.installment ? sql.json(s.installment as never) : null})
    returning *`;
  return row!;
}

export async function findSession(sql: Db, o: Owner, id: string): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select * from checkout_sessions where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/**
 * The hosted pages know a session only by its id (the unguessable id in the URL is what lets the
 * payer in); the row then tells the account and mode, which every later query filters on.
 */
export async function findSessionForPage(sql: Sql, id: string): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`select * from checkout_sessions where id = ${id}`;
  return row;
}

/** Locks the session for a payment attempt: expiry and payment serialise on this row. */
export async function lockSession(sql: TxSql, o: Owner, id: string): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select * from checkout_sessions
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
  return row;
}

export async function listSessions(sql: Sql, o: Owner, p: ListSessions): Promise<SessionRow[]> {
  const k = keyset(sql, p);
  return sql<SessionRow[]>`
    select * from checkout_sessions
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${p.status !== undefined ? sql`and status = ${p.status}` : emptyFragment(sql)}
      ${customerOf(p) !== undefined ? sql`and customer_id = ${customerOf(p)!}` : emptyFragment(sql)}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

/**
 * An OPEN session of invoice `invoiceId` for exactly `amount` that the hosted invoice page may hand
 * out again instead of opening another: unexpired for at least `minLeftSeconds` more, and with no
 * attempt in flight.
 */
export async function findReusableInvoiceSession(sql: Sql, o: Owner, invoiceId: string, amount: number, minLeftSeconds: number): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select * from checkout_sessions cs
    where invoice_id = ${invoiceId} and account_id = ${o.accountId} and livemode = ${o.livemode}
      and status = 'OPEN' and amount_cents = ${amount}
      and expires_at > now() + make_interval(secs => ${minLeftSeconds})
      and not exists (
        select 1 from payments p
        where p.checkout_session_id = cs.id and p.status = 'PENDING' and p.processing_since is not null)
    order by id desc limit 1`;
  return row;
}

/**
 * OPEN to COMPLETE; the caller holds the row lock. `paymentId` null: a setup session, whose
 * payment_status stays no_payment_required. `customerId`: the customer the payment was attached to
 * when the session named none (a plan's first part).
 */
export async function markComplete(sql: TxSql, o: Owner, id: string, paymentId: string | null, customerId: string | null = null): Promise<SessionRow> {
  const [row] = await sql<SessionRow[]>`
    update checkout_sessions
    set status = 'COMPLETE', payment_status = case when mode = 'setup' then payment_status else 'paid' end,
      payment_id = ${paymentId}, completed_at = now(), updated_at = now(), customer_id = coalesce(customer_id, ${customerId})
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and status = 'OPEN'
    returning *`;
  if (!row) throw new Error(`session ${id} was not OPEN under its lock`);
  return row;
}

/**
 * OPEN to EXPIRED, conditionally: of expiry and payment exactly one wins. With `dueAt`, only a
 * session whose expires_at has passed by then is expired (the job and expire-on-read).
 */
export async function markExpired(sql: TxSql, o: Owner, id: string, dueAt: Date | null): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    update checkout_sessions set status = 'EXPIRED', expired_at = now(), updated_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and status = 'OPEN'
      ${dueAt ? sql`and expires_at <= ${dueAt}` : sql``}
    returning *`;
  return row;
}

/**
 * OPEN to EXPIRED for up to `limit` sessions past expires_at, of any account, oldest due first.
 * Rows locked by a payment starting are skipped, and so are sessions with an attempt in flight:
 * its outcome decides them (paid, or expired once recorded). Two statements on purpose: the
 * in-flight check runs after the locks are taken, so its snapshot sees every attempt committed
 * before them (a subquery of the locking statement would read an older snapshot). A maintenance
 * query: it picks by due time, and each row then carries its own account.
 */
export async function markDueExpired(sql: TxSql, dueBefore: Date | null, limit: number): Promise<SessionRow[]> {
  // A session with a payment attempt in flight is skipped here, so that a batch is never filled
  // by sessions it cannot expire. `dueBefore` null: the database's clock at the transaction's start
  // (the sweeper's; now(), not clock_timestamp(): a volatile bound cannot be an index condition, and
  // the plan then sorts every due row for each batch).
  const locked = await sql<{ id: string }[]>`
    select id from checkout_sessions s
    where status = 'OPEN' and expires_at <= ${dueBefore ?? sql`now()`}
      and not exists (
        select 1 from payments p where p.checkout_session_id = s.id and p.status = 'PENDING' and p.processing_since is not null)
    order by expires_at limit ${limit}
    for update skip locked`;
  if (locked.length === 0) return [];
  return sql<SessionRow[]>`
    update checkout_sessions set status = 'EXPIRED', expired_at = now(), updated_at = now()
    where id = any(${locked.map((r) => r.id)}::text[])
      and not exists (
        select 1 from payments p
        where p.checkout_session_id = checkout_sessions.id and p.status = 'PENDING' and p.processing_since is not null)
    returning *`;
}

/**
 * Milliseconds from the database's clock now to the earliest expires_at of the OPEN sessions that
 * a sweep may expire (no payment attempt in flight): ≤ 0 when one is already due (the partial index
 * checkout_sessions_open_expiry, read from its start); null when none is pending.
 */
export async function msToNextExpiry(sql: Db): Promise<number | null> {
  const [row] = await sql<{ ms: number | null }[]>`
    select (extract(epoch from expires_at - now()) * 1000)::float8 as ms from checkout_sessions s
    where status = 'OPEN'
      and not exists (
        select 1 from payments p where p.checkout_session_id = s.id and p.status = 'PENDING' and p.processing_since is not null)
    order by expires_at limit 1`;
  return row?.ms ?? null;
}

/** OPEN sessions of one account past their expires_at (expire-on-read of a list). */
export async function dueSessionIds(sql: Sql, o: Owner, now: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from checkout_sessions
    where status = 'OPEN' and expires_at <= ${now} and account_id = ${o.accountId} and livemode = ${o.livemode}
    order by expires_at limit ${limit}`;
  return rows.map((r) => r.id);
}

export type { Owner };

/** The session of a processor intent (Stripe's events name the intent), whoever owns it. */
export async function findSessionByIntent(sql: Db, intentId: string, livemode: boolean): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select * from checkout_sessions where payment_intent_id = ${intentId} and livemode = ${livemode}`;
  return row;
}

/** Stores the session's intent unless one is stored already; answers the one that stands. */
export async function storePaymentIntent(sql: Db, o: Owner, id: string, intentId: string): Promise<string | null> {
  const [row] = await sql<{ payment_intent_id: string | null }[]>`
    update checkout_sessions set payment_intent_id = coalesce(payment_intent_id, ${intentId}), updated_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} returning payment_intent_id`;
  return row?.payment_intent_id ?? null;
}

/** The expired session's intent is closed at the processor (cancelled, or its late charge recorded). */
export async function markIntentClosed(sql: Db, id: string): Promise<void> {
  await sql`update checkout_sessions set intent_closed_at = now() where id = ${id} and intent_closed_at is null`;
}

/** Expired sessions whose intent is not known closed yet, oldest first. */
export async function expiredWithOpenIntent(sql: Sql, livemodes: boolean[], limit: number): Promise<SessionRow[]> {
  return sql<SessionRow[]>`
    select * from checkout_sessions
    where status = 'EXPIRED' and payment_intent_id is not null and intent_closed_at is null
      ${livemodes.length === 1 ? sql`and livemode = ${livemodes[0]!}` : sql``}
    order by updated_at limit ${limit}`;
}
