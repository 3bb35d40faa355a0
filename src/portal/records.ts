import type { Db, Sql } from '../db/sql.ts';
import type { InvoiceRow } from '../invoices/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { PortalScope } from './store.ts';

/**
 * What a signed-in customer may see: their own payments and sent invoices with the merchant. Every
 * query filters on the session's account, mode and customer; a record of anyone else is simply
 * not found, so the page answers 404 as for a missing id.
 */

/** A payment with the checkout session whose receipt page shows it (null when there is none: not succeeded). */
export type PortalPayment = PaymentRow & {
  receipt_session_id: string | null;
  invoice_number: string | null;
  /** How many parts the plan of an installment's payment has (null for any other payment). */
  installment_count: number | null;
};

/** At most this many rows on a list page; the page links to the older ones. */
export const PAGE_SIZE = 20;

const paymentColumns = (sql: Db) => sql`
  p.*,
  case when cs.status = 'COMPLETE' and cs.payment_id = p.id then cs.id end as receipt_session_id,
  i.number as invoice_number,
  ip.count as installment_count`;

const paymentJoins = (sql: Db) => sql`
  left join checkout_sessions cs on cs.id = p.checkout_session_id and cs.account_id = p.account_id and cs.livemode = p.livemode
  left join invoices i on i.id = coalesce(p.invoice_id, cs.invoice_id) and i.account_id = p.account_id and i.livemode = p.livemode
  left join installment_plans ip on ip.id = p.installment_plan_id and ip.account_id = p.account_id and ip.livemode = p.livemode`;

/** The customer's payments, newest first; `olderThan` (an id) pages on. */
export async function customerPayments(sql: Sql, sc: PortalScope, limit: number, olderThan?: string): Promise<PortalPayment[]> {
  return sql<PortalPayment[]>`
    select ${paymentColumns(sql)} from payments p ${paymentJoins(sql)}
    where p.account_id = ${sc.accountId} and p.livemode = ${sc.livemode} and p.customer_id = ${sc.customerId}
      ${olderThan ? sql`and p.id < ${olderThan}` : sql``}
    order by p.id desc limit ${limit}`;
}

export async function customerPayment(sql: Sql, sc: PortalScope, id: string): Promise<PortalPayment | undefined> {
  const [row] = await sql<PortalPayment[]>`
    select ${paymentColumns(sql)} from payments p ${paymentJoins(sql)}
    where p.id = ${id} and p.account_id = ${sc.accountId} and p.livemode = ${sc.livemode} and p.customer_id = ${sc.customerId}`;
  return row;
}

/** An invoice with the ACTIVE installment plan paying it, if any: its parts are charged on their dates, so the portal offers no Pay. */
export type PortalInvoice = InvoiceRow & { plan_id: string | null };

const invoiceColumns = (sql: Db) => sql`
  invoices.*,
  (select ip.id from installment_plans ip where ip.invoice_id = invoices.id and ip.status = 'ACTIVE' limit 1) as plan_id`;

/** Invoices the customer was sent (a draft, or one never sent, has no page the customer could open). */
const sentInvoices = (sql: Db, sc: PortalScope) => sql`
  account_id = ${sc.accountId} and livemode = ${sc.livemode} and customer_id = ${sc.customerId}
  and status <> 'DRAFT' and sent_at is not null`;

/** The customer's sent invoices, newest first; `open` only those with something to pay (OPEN or UNCOLLECTIBLE). */
export async function customerInvoices(sql: Sql, sc: PortalScope, limit: number, opts: { olderThan?: string | undefined; open?: boolean; settled?: boolean } = {}): Promise<PortalInvoice[]> {
  return sql<PortalInvoice[]>`
    select ${invoiceColumns(sql)} from invoices
    where ${sentInvoices(sql, sc)}
      ${opts.open ? sql`and status in ('OPEN', 'UNCOLLECTIBLE') and amount_due_cents > 0` : sql``}
      ${opts.settled ? sql`and not (status in ('OPEN', 'UNCOLLECTIBLE') and amount_due_cents > 0)` : sql``}
      ${opts.olderThan ? sql`and id < ${opts.olderThan}` : sql``}
    order by id desc limit ${limit}`;
}

export async function customerInvoice(sql: Sql, sc: PortalScope, id: string): Promise<PortalInvoice | undefined> {
  const [row] = await sql<PortalInvoice[]>`select ${invoiceColumns(sql)} from invoices where id = ${id} and ${sentInvoices(sql, sc)}`;
  return row;
}

/** An installment plan as the portal shows it (migrations/0020_installments.sql). */
export interface PortalPlan {
  id: string;
  status: 'ACTIVE' | 'COMPLETED' | 'DEFAULTED' | 'CANCELLED';
  currency: string;
  total_cents: number;
  count: number;
  interval: 'week' | 'month';
  description: string | null;
  card_brand: string | null;
  card_last4: string | null;
  created_at: Date;
  /** A test plan on the shortened calendar (INSTALLMENT_TEST_*): its dates are shown with their time. */
  shortened: boolean;
  /** Of its parts: how many are paid, what they add up to, and the next one due (null when none is). */
  paid_count: number;
  paid_cents: number;
  next_due_at: Date | null;
  next_amount_cents: number | null;
}

/** One part of a plan's schedule. */
export interface PortalInstallment {
  number: number;
  amount_cents: number;
  due_at: Date;
  status: 'SCHEDULED' | 'PAID' | 'RETRYING' | 'FAILED' | 'CANCELLED';
  next_attempt_at: Date | null;
  paid_at: Date | null;
  payment_id: string | null;
}

const planColumns = (sql: Db) => sql`
  ip.id, ip.status, ip.currency, ip.total_cents, ip.count, ip.interval, ip.description, ip.card_brand, ip.card_last4, ip.created_at,
  ip.test_interval_seconds is not null as shortened,
  (select count(*) from installments i where i.plan_id = ip.id and i.status = 'PAID')::int as paid_count,
  (select coalesce(sum(i.amount_cents), 0) from installments i where i.plan_id = ip.id and i.status = 'PAID')::bigint as paid_cents,
  n.due_at as next_due_at, n.amount_cents as next_amount_cents`;

const nextPart = (sql: Db) => sql`
  left join lateral (
    select i.due_at, i.amount_cents from installments i
    where i.plan_id = ip.id and i.status in ('SCHEDULED', 'RETRYING') order by i.number limit 1
  ) n on true`;

/** The customer's installment plans, newest first (active ones first). */
export async function customerPlans(sql: Sql, sc: PortalScope, limit: number): Promise<PortalPlan[]> {
  return sql<PortalPlan[]>`
    select ${planColumns(sql)} from installment_plans ip ${nextPart(sql)}
    where ip.account_id = ${sc.accountId} and ip.livemode = ${sc.livemode} and ip.customer_id = ${sc.customerId}
    order by (ip.status = 'ACTIVE') desc, ip.id desc limit ${limit}`;
}

export async function customerPlan(sql: Sql, sc: PortalScope, id: string): Promise<PortalPlan | undefined> {
  const [row] = await sql<PortalPlan[]>`
    select ${planColumns(sql)} from installment_plans ip ${nextPart(sql)}
    where ip.id = ${id} and ip.account_id = ${sc.accountId} and ip.livemode = ${sc.livemode} and ip.customer_id = ${sc.customerId}`;
  return row;
}

/** The schedule of a plan already found to be the customer's (customerPlan), in order. */
export async function planSchedule(sql: Sql, planId: string): Promise<PortalInstallment[]> {
  return sql<PortalInstallment[]>`
    select number, amount_cents, due_at, status, next_attempt_at, paid_at, payment_id from installments
    where plan_id = ${planId} order by number`;
}

/** Whether the customer has any installment plan (the navigation offers Plans only then). */
export async function hasPlans(sql: Sql, sc: PortalScope): Promise<boolean> {
  const [row] = await sql<{ any: boolean }[]>`
    select exists (select 1 from installment_plans where account_id = ${sc.accountId} and livemode = ${sc.livemode} and customer_id = ${sc.customerId}) as any`;
  return row!.any;
}

/**
 * The customer's latest card update of a plan (a setup session of the hosted checkout, opened by
 * "Replace the card"): whether it saved a card, and when. Undefined when there was none.
 */
export async function latestCardUpdate(sql: Sql, sc: PortalScope, planId: string): Promise<{ status: 'OPEN' | 'COMPLETE' | 'EXPIRED'; completed_at: Date | null } | undefined> {
  const [row] = await sql<{ status: 'OPEN' | 'COMPLETE' | 'EXPIRED'; completed_at: Date | null }[]>`
    select status, completed_at from checkout_sessions
    where account_id = ${sc.accountId} and livemode = ${sc.livemode} and customer_id = ${sc.customerId}
      and mode = 'setup' and installment->>'kind' = 'card_update' and installment->>'plan_id' = ${planId}
    order by id desc limit 1`;
  return row;
}
