import type { Sql, TxSql } from '../db/sql.ts';
import { customerOf, keyset } from '../lib/pagination.ts';
import type { ListPayments } from './schema.ts';
import type { Owner } from '../lib/owner.ts';
import { countPaymentOutcomes } from '../reports/store.ts';

export type PaymentStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';
export type ReviewStatus = 'open' | 'approving' | 'refusing' | 'approved' | 'refused' | 'expired';

/** A payment: its row, with what the fraud rules saw and decided (FraudMarks: src/fraud, docs/fraud.md; null where no rule applied). */
export interface PaymentRow extends FraudMarks {
  id: string;
  account_id: string;
  livemode: boolean;
  status: PaymentStatus;
  amount_cents: number;
  currency: string;
  checkout_session_id: string | null;
  payment_intent_id: string | null;
  customer_id: string | null;
  email: string | null;
  billing_name: string | null;
  card_brand: string | null;
  card_last4: string | null;
  next_action: string | null;
  failure_code: string | null;
  failure_message: string | null;
  description: string | null;
  payment_link_id: string | null;
  link_source: string | null;
  /** The invoice this payment pays (copied from its checkout session); null otherwise. */
  invoice_id: string | null;
  succeeded_at: Date | null;
  failed_at: Date | null;
  /** The sum of its SUCCEEDED refunds (refunds/settle.ts adds each one as it succeeds). */
  amount_refunded_cents: number;
  /** Set by disputes; a disputed payment cannot be refunded. */
  disputed: boolean;
  /** Set while the processor is being asked about this attempt (in flight); null otherwise. */
  processing_since: Date | null;
  /** Payment Element attempts: the intent's last charge when the attempt was prepared (stale-decline guard). */
  processor_prior_charge: string | null;
  /** The installment plan this payment pays a part of, and which part (1: the first, on the hosted checkout). */
  installment_plan_id: string | null;
  installment_number: number | null;
  /** The reusable card the processor kept with this payment (a plan's first part), or charged (a later part). */
  processor_payment_method: string | null;
  /** A payment held for review: open (authorised, not captured), approving / refusing, then approved, refused or expired. */
  review_status: ReviewStatus | null;
  review_deadline: Date | null;
  review_closed_at: Date | null;
  review_closed_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export type NewPayment = Pick<
  PaymentRow,
  | 'id' | 'amount_cents' | 'currency' | 'checkout_session_id' | 'payment_intent_id' | 'customer_id' | 'email'
  | 'billing_name' | 'card_brand' | 'card_last4' | 'description' | 'payment_link_id' | 'link_source'
> & {
  processor_prior_charge?: string | null;
  invoice_id?: string | null;
  /** A later part of a plan (charged off-session, no checkout session): the plan, the part and the card charged. */
  installment_plan_id?: string | null;
  installment_number?: number | null;
  processor_payment_method?: string | null;
  /** The hosted page's attempt: what the fraud rules saw and decided. */
  fraud?: FraudMarks;
};

export interface FraudMarks {
  card_fingerprint: string | null;
  card_country: string | null;
  client_ip: string | null;
  fraud_action: 'allow' | 'block' | 'review' | null;
  fraud_rule_id: string | null;
  fraud_reason: string | null;
}

/** A new attempt, PENDING and in flight: it is committed before the processor is called. */
export async function insertPayment(sql: TxSql, o: Owner, p: NewPayment): Promise<PaymentRow> {
  const f = p.fraud;
  const [row] = await sql<PaymentRow[]>`
    insert into payments (id, account_id, livemode, amount_cents, currency, checkout_session_id, payment_intent_id,
      customer_id, email, billing_name, card_brand, card_last4, description, payment_link_id, link_source, processing_since,
      processor_prior_charge, invoice_id, installment_plan_id, installment_number, processor_payment_method,
      card_fingerprint, card_country, client_ip, fraud_action, fraud_rule_id, fraud_reason)
    values (${p.id}, ${o.accountId}, ${o.livemode}, ${p.amount_cents}, ${p.currency}, ${p.checkout_session_id},
      ${p.payment_intent_id}, ${p.customer_id}, ${p.email}, ${p.billing_name}, ${p.card_brand}, ${p.card_last4},
      ${p.description}, ${p.payment_link_id}, ${p.link_source}, now(), ${p.processor_prior_charge ?? null},
      ${p.invoice_id ?? null}, ${p.installment_plan_id ?? null}, ${p.installment_number ?? null}, ${p.processor_payment_method ?? null},
      ${f?.card_fingerprint ?? null}, ${f?.card_country ?? null}, ${f?.client_ip ?? null}::inet, ${f?.fraud_action ?? null},
      ${f?.fraud_rule_id ?? null}, ${f?.fraud_reason ?? null})
    returning *`;
  return row!;
}

export async function findPayment(sql: Sql | TxSql, o: Owner, id: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/** The attempt of a session waiting for its 3-D Secure challenge (not already being completed), locked. */
export async function lockPendingChallenge(sql: TxSql, o: Owner, sessionId: string, id: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}
      and checkout_session_id = ${sessionId} and status = 'PENDING' and next_action = 'three_d_secure'
      and processing_since is null
    for update`;
  return row;
}

/** The challenge's completion is about to be sent to the processor: the attempt is in flight again. */
export async function markProcessing(sql: TxSql, o: Owner, id: string): Promise<PaymentRow> {
  const [row] = await sql<PaymentRow[]>`
    update payments set processing_since = now(), updated_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and status = 'PENDING'
    returning *`;
  if (!row) throw new Error(`payment ${id} was not PENDING`);
  return row;
}

/**
 * The attempt of a session whose outcome is not recorded yet, if any. Read after the session row
 * is locked, in a statement of its own, so it sees every attempt committed before the lock.
 */
export async function inFlightOfSession(sql: Sql | TxSql, o: Owner, sessionId: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments
    where checkout_session_id = ${sessionId} and account_id = ${o.accountId} and livemode = ${o.livemode}
      and status = 'PENDING' and processing_since is not null
    limit 1`;
  return row;
}

/** The in-flight attempt `id`, locked; undefined when its outcome is already recorded (by a request or the sweeper). */
export async function lockInFlight(sql: TxSql, id: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments where id = ${id} and status = 'PENDING' and processing_since is not null for update`;
  return row;
}

/** The in-flight attempt of a session on intent `intentId`, if any (the processor's events name the intent). */
export async function inFlightOfIntent(sql: Sql | TxSql, o: Owner, sessionId: string, intentId: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments
    where checkout_session_id = ${sessionId} and account_id = ${o.accountId} and livemode = ${o.livemode}
      and payment_intent_id = ${intentId} and status = 'PENDING' and processing_since is not null
    limit 1`;
  return row;
}

/** The SUCCEEDED payment of an intent (an intent is charged at most once), if recorded. */
export async function succeededOfIntent(sql: TxSql, o: Owner, intentId: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments
    where payment_intent_id = ${intentId} and account_id = ${o.accountId} and livemode = ${o.livemode} and status = 'SUCCEEDED'
    limit 1`;
  return row;
}

/** The latest attempt of an intent (its payer's email and name serve a charge recorded late). */
export async function latestOfIntent(sql: TxSql, o: Owner, intentId: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments
    where payment_intent_id = ${intentId} and account_id = ${o.accountId} and livemode = ${o.livemode}
    order by id desc limit 1`;
  return row;
}

/**
 * Checkout attempts in flight since before `before`: left so by a crash between the processor call
 * and its record. Off-session charges (the later parts of installment plans, which have no checkout
 * session) have a sweeper of their own: `stuckOffSession`.
 */
export async function stuckInFlight(sql: Sql, before: Date, limit: number): Promise<PaymentRow[]> {
  return sql<PaymentRow[]>`
    select * from payments where processing_since is not null and processing_since < ${before} and checkout_session_id is not null
      and review_status is null
    order by processing_since limit ${limit}`;
}

/** Off-session charges (no checkout session) in flight since before `before`, oldest first. */
export async function stuckOffSession(sql: Sql, before: Date, limit: number): Promise<PaymentRow[]> {
  return sql<PaymentRow[]>`
    select * from payments where processing_since is not null and processing_since < ${before} and checkout_session_id is null
    order by processing_since limit ${limit}`;
}

/**
 * The places of a payment link already taken: SUCCEEDED payments plus the attempts in flight,
 * which reserve theirs until their outcome is recorded (the link row is not locked meanwhile).
 * An installment plan takes one place, with its first part: its later parts take none.
 */
export async function linkPlacesTaken(sql: TxSql, linkId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from payments
    where payment_link_id = ${linkId} and (status = 'SUCCEEDED' or processing_since is not null)
      and coalesce(installment_number, 1) = 1`;
  return row!.n;
}

/**
 * The amount an invoice's attempts in flight hold (they keep it while the processor is called with
 * no lock held), leaving out the attempts of session `exceptSessionId` (the one asking: its own
 * attempt must not block it). Read under the invoice's row lock (invoices/participant.ts).
 */
export async function invoiceAmountInFlight(sql: TxSql, invoiceId: string, exceptSessionId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(amount_cents), 0)::bigint as n from payments
    where invoice_id = ${invoiceId} and processing_since is not null and checkout_session_id is distinct from ${exceptSessionId}`;
  return row!.n;
}

/** What a success records besides the status, where there is something. */
export interface SuccessDetails {
  /** The processor's intent of the charge, when it was learnt with the answer (an off-session charge). */
  intentId?: string | null;
  /** The card the processor kept (saveCard). */
  paymentMethod?: string | null;
  /** The first part of an installment plan: the plan its success creates. */
  installmentPlanId?: string | null;
  installmentNumber?: number | null;
  /** The customer the payment belongs to when it had none (an installment plan's, found or made by the payer's email). */
  customerId?: string | null;
}

/** `card`: brand and last four as the processor reports them (Stripe's Payment Element: the service never saw the card). */
export async function markSucceeded(
  sql: TxSql,
  o: Owner,
  id: string,
  card: { brand: string; last4: string; fingerprint?: string | null; country?: string | null } | null = null,
  d: SuccessDetails = {},
): Promise<PaymentRow> {
  const [row] = await sql<PaymentRow[]>`
    update payments
    set status = 'SUCCEEDED', next_action = null, processing_since = null, succeeded_at = now(), updated_at = now(),
      card_brand = coalesce(${card?.brand ?? null}, card_brand), card_last4 = coalesce(${card?.last4 ?? null}, card_last4),
      card_fingerprint = coalesce(card_fingerprint, ${card?.fingerprint ?? null}), card_country = coalesce(card_country, ${card?.country ?? null}),
      payment_intent_id = coalesce(${d.intentId ?? null}, payment_intent_id),
      processor_payment_method = coalesce(${d.paymentMethod ?? null}, processor_payment_method),
      installment_plan_id = coalesce(${d.installmentPlanId ?? null}, installment_plan_id),
      installment_number = coalesce(${d.installmentNumber ?? null}::int, installment_number),
      customer_id = coalesce(customer_id, ${d.customerId ?? null})
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and status = 'PENDING'
    returning *`;
  if (!row) throw new Error(`payment ${id} was not PENDING`);
  await countPaymentOutcomes(sql, [row]); // the reports' rollup, in this transaction (src/reports)
  return row;
}

export async function markFailed(sql: TxSql, o: Owner, id: string, code: string, message: string, intentId: string | null = null): Promise<PaymentRow> {
  const [row] = await sql<PaymentRow[]>`
    update payments
    set status = 'FAILED', next_action = null, processing_since = null, failure_code = ${code},
        failure_message = ${message}, failed_at = now(), updated_at = now(),
        payment_intent_id = coalesce(${intentId}, payment_intent_id)
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and status = 'PENDING'
    returning *`;
  if (!row) throw new Error(`payment ${id} was not PENDING`);
  await countPaymentOutcomes(sql, [row]); // the reports' rollup, in this transaction (src/reports)
  return row;
}

export async function markRequiresAction(sql: TxSql, o: Owner, id: string): Promise<PaymentRow> {
  const [row] = await sql<PaymentRow[]>`
    update payments set next_action = 'three_d_secure', processing_since = null, updated_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} returning *`;
  return row!;
}

/**
 * Attempts of a session left waiting for a 3-D Secure challenge the payer never finished: they
 * fail when another attempt starts or the session ends, so no payment stays PENDING for ever.
 * An attempt in flight is never failed here: only its outcome (or the sweeper) settles it.
 */
export async function failAbandoned(sql: TxSql, o: Owner, sessionId: string, code: string, message: string): Promise<PaymentRow[]> {
  const rows = await sql<PaymentRow[]>`
    update payments
    set status = 'FAILED', next_action = null, failure_code = ${code}, failure_message = ${message},
        failed_at = now(), updated_at = now()
    where checkout_session_id = ${sessionId} and account_id = ${o.accountId} and livemode = ${o.livemode}
      and status = 'PENDING' and processing_since is null
    returning *`;
  await countPaymentOutcomes(sql, rows);
  return rows;
}

/** failAbandoned for the sessions of a batch (each payment keeps its own account). */
export async function failAbandonedOfSessions(sql: TxSql, sessionIds: string[], code: string, message: string): Promise<PaymentRow[]> {
  const rows = await sql<PaymentRow[]>`
    update payments
    set status = 'FAILED', next_action = null, failure_code = ${code}, failure_message = ${message},
        failed_at = now(), updated_at = now()
    where checkout_session_id = any(${sessionIds}::text[]) and status = 'PENDING' and processing_since is null
    returning *`;
  await countPaymentOutcomes(sql, rows);
  return rows;
}

/** The payment, locked: refunds of one payment are checked against its amount one at a time. */
export async function lockPayment(sql: TxSql, o: Owner, id: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    select * from payments where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
  return row;
}

/** A refund of `amount` succeeded: counted on the payment, whose row the caller has locked. */
export async function addRefunded(sql: TxSql, id: string, amount: number): Promise<PaymentRow> {
  const [row] = await sql<PaymentRow[]>`
    update payments set amount_refunded_cents = amount_refunded_cents + ${amount}, updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

/**
 * A page of payments. `email` (the dashboard's filter, not the API's) keeps the payments whose payer
 * email is it, or whose customer's is, whatever the letters' case.
 */
export async function listPayments(sql: Sql, o: Owner, p: ListPayments & { email?: string | undefined }): Promise<PaymentRow[]> {
  const k = keyset(sql, p);
  return sql<PaymentRow[]>`
    select * from payments
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${p.status !== undefined ? sql`and status = ${p.status}` : sql``}
      ${customerOf(p) !== undefined ? sql`and customer_id = ${customerOf(p)!}` : sql``}
      ${p.email !== undefined ? sql`and (lower(email) = lower(${p.email}) or customer_id in (
        select id from customers where account_id = ${o.accountId} and livemode = ${o.livemode} and lower(email) = lower(${p.email})))` : sql``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

/** The payment attempts of a checkout session, newest first (the dashboard's session page). */
export async function paymentsOfSession(sql: Sql, o: Owner, sessionId: string, limit = 50): Promise<PaymentRow[]> {
  return sql<PaymentRow[]>`
    select * from payments
    where checkout_session_id = ${sessionId} and account_id = ${o.accountId} and livemode = ${o.livemode}
    order by id desc limit ${limit}`;
}

/**
 * Reviews (docs/fraud.md). A held payment stays PENDING and in flight (processing_since set), so
 * its session takes no other attempt and does not expire under it, and the in-flight sweeper
 * leaves it to the review sweeper (review_status set).
 */
export async function markHeld(sql: TxSql, id: string, deadline: Date, card: { brand: string; last4: string } | null): Promise<PaymentRow> {
  const [row] = await sql<PaymentRow[]>`
    update payments set review_status = 'open', review_deadline = ${deadline}, next_action = null,
      card_brand = coalesce(${card?.brand ?? null}, card_brand), card_last4 = coalesce(${card?.last4 ?? null}, card_last4), updated_at = now()
    where id = ${id} and status = 'PENDING' and processing_since is not null and review_status is null returning *`;
  return row!;
}

/** Open → approving / refusing (the decision taken, the processor not yet told), or one already so: the row, locked. */
export async function startClosingReview(sql: TxSql, o: Owner, id: string, to: 'approving' | 'refusing', by: string): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    update payments set review_status = ${to}, review_closed_by = ${by}, updated_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and review_status = 'open' returning *`;
  return row;
}

export async function closeReview(sql: TxSql, id: string, outcome: 'approved' | 'refused' | 'expired'): Promise<void> {
  await sql`update payments set review_status = ${outcome}, review_closed_at = now(), updated_at = now() where id = ${id}`;
}

/** Reviews past their deadline, and decisions whose processor call a crash left unfinished (updated before `stale`). */
export async function reviewsDue(sql: Sql, stale: Date, limit: number): Promise<PaymentRow[]> {
  return sql<PaymentRow[]>`
    select * from payments
    where review_status in ('open', 'approving', 'refusing')
      and ((review_status = 'open' and review_deadline <= now()) or (review_status <> 'open' and updated_at < ${stale}))
    order by review_deadline limit ${limit}`;
}

/** The open reviews of an account and mode, oldest deadline first (the dashboard's queue). */
export async function openReviews(sql: Sql, o: Owner, limit = 50): Promise<PaymentRow[]> {
  return sql<PaymentRow[]>`
    select * from payments
    where review_status in ('open', 'approving', 'refusing') and account_id = ${o.accountId} and livemode = ${o.livemode}
    order by review_deadline limit ${limit}`;
}

export type { Owner };
