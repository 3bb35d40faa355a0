import type { Db, Sql, TxSql } from '../db/sql.ts';
import type { InstallmentInterval } from '../lib/installments.ts';
import type { Owner } from '../lib/owner.ts';
import { customerOf, keyset } from '../lib/pagination.ts';
import type { ListInstallmentPlans, PartStatus, PlanStatus } from './schema.ts';

export interface PlanRow {
  id: string;
  account_id: string;
  livemode: boolean;
  customer_id: string;
  payment_link_id: string | null;
  invoice_id: string | null;
  checkout_session_id: string;
  currency: string;
  total_cents: number;
  count: number;
  interval: InstallmentInterval;
  test_interval_seconds: number | null;
  test_retry_seconds: number | null;
  status: PlanStatus;
  email: string;
  description: string | null;
  processor_payment_method: string | null;
  card_brand: string | null;
  card_last4: string | null;
  agreement_text: string;
  agreed_at: Date;
  agreement_ip: string | null;
  metadata: Record<string, string>;
  completed_at: Date | null;
  defaulted_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface PartRow {
  plan_id: string;
  number: number;
  amount_cents: number;
  due_at: Date;
  status: PartStatus;
  next_attempt_at: Date | null;
  attempt_count: number;
  payment_id: string | null;
  first_failed_at: Date | null;
  paid_at: Date | null;
}

/** A plan with its parts in order: what the presenter shows. */
export interface PlanWithParts {
  plan: PlanRow;
  parts: PartRow[];
}

export type NewPlan = Omit<PlanRow, 'account_id' | 'livemode' | 'status' | 'completed_at' | 'defaulted_at' | 'cancelled_at' | 'created_at' | 'updated_at'>;

export async function insertPlan(tx: TxSql, o: Owner, plan: NewPlan, parts: Array<Pick<PartRow, 'number' | 'amount_cents' | 'due_at'>>, firstPayment: string): Promise<PlanWithParts> {
  const [row] = await tx<PlanRow[]>`
    insert into installment_plans ${tx({ ...plan, account_id: o.accountId, livemode: o.livemode, metadata: tx.json(plan.metadata) } as Record<string, unknown>)}
    returning *`;
  // The first part is paid by the payment whose success creates the plan; the others wait for their date.
  const rows = await tx<PartRow[]>`
    insert into installments (plan_id, number, amount_cents, due_at, status, next_attempt_at, attempt_count, payment_id, paid_at)
    select ${plan.id}, p.number, p.amount, p.due_at,
      case when p.number = 1 then 'PAID' else 'SCHEDULED' end,
      case when p.number = 1 then null else p.due_at end,
      case when p.number = 1 then 1 else 0 end,
      case when p.number = 1 then ${firstPayment} end,
      case when p.number = 1 then now() end
    from unnest(${parts.map((p) => p.number)}::int[], ${parts.map((p) => p.amount_cents)}::bigint[], ${parts.map((p) => p.due_at.toISOString())}::timestamptz[])
      as p (number, amount, due_at)
    returning *`;
  return { plan: row!, parts: rows.sort((a, b) => a.number - b.number) };
}

export async function findPlan(sql: Db, o: Owner, id: string): Promise<PlanRow | undefined> {
  const [row] = await sql<PlanRow[]>`
    select * from installment_plans where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/** The plan, locked: a plan's charges, its cancel and its card update serialise on this row (plan first, then its parts). */
export async function lockPlan(tx: TxSql, o: Owner, id: string): Promise<PlanRow | undefined> {
  const [row] = await tx<PlanRow[]>`
    select * from installment_plans where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
  return row;
}

/** The plan by id alone (a charge job knows no owner: the row tells it), locked. */
export async function lockPlanById(tx: TxSql, id: string): Promise<PlanRow | undefined> {
  const [row] = await tx<PlanRow[]>`select * from installment_plans where id = ${id} for update`;
  return row;
}

export async function partsOf(sql: Db, planId: string): Promise<PartRow[]> {
  return sql<PartRow[]>`select * from installments where plan_id = ${planId} order by number`;
}

/** The parts of several plans (a list page), grouped by plan. */
export async function partsOfPlans(sql: Sql, planIds: readonly string[]): Promise<Map<string, PartRow[]>> {
  const out = new Map<string, PartRow[]>(planIds.map((id) => [id, []]));
  if (planIds.length === 0) return out;
  const rows = await sql<PartRow[]>`select * from installments where plan_id = any(${[...planIds]}::text[]) order by plan_id, number`;
  for (const r of rows) out.get(r.plan_id)!.push(r);
  return out;
}

export async function lockPart(tx: TxSql, planId: string, number: number): Promise<PartRow | undefined> {
  const [row] = await tx<PartRow[]>`select * from installments where plan_id = ${planId} and number = ${number} for update`;
  return row;
}

/** A charge of the plan in flight (its payment committed, the processor's answer not recorded). Read after the plan's lock. */
export async function chargeInFlight(tx: TxSql, planId: string): Promise<boolean> {
  const rows = await tx`
    select 1 from payments where installment_plan_id = ${planId} and processing_since is not null and checkout_session_id is null limit 1`;
  return rows.length > 0;
}

export type PartChanges = Partial<Pick<PartRow, 'status' | 'next_attempt_at' | 'attempt_count' | 'payment_id' | 'first_failed_at' | 'paid_at'>>;

export async function updatePart(tx: TxSql, planId: string, number: number, changes: PartChanges): Promise<PartRow> {
  const [row] = await tx<PartRow[]>`
    update installments set ${tx(changes as Record<string, unknown>)} where plan_id = ${planId} and number = ${number} returning *`;
  return row!;
}

/** Every part not paid yet (SCHEDULED, RETRYING) becomes CANCELLED: a plan cancelled or defaulted. */
export async function cancelOpenParts(tx: TxSql, planId: string): Promise<PartRow[]> {
  return tx<PartRow[]>`
    update installments set status = 'CANCELLED', next_attempt_at = null
    where plan_id = ${planId} and status in ('SCHEDULED', 'RETRYING') returning *`;
}

export async function setPlanStatus(tx: TxSql, id: string, status: Exclude<PlanStatus, 'ACTIVE'>): Promise<PlanRow> {
  const [row] = await tx<PlanRow[]>`
    update installment_plans set status = ${status}, updated_at = now(),
      completed_at = case when ${status} = 'COMPLETED' then now() else completed_at end,
      defaulted_at = case when ${status} = 'DEFAULTED' then now() else defaulted_at end,
      cancelled_at = case when ${status} = 'CANCELLED' then now() else cancelled_at end
    where id = ${id} and status = 'ACTIVE' returning *`;
  if (!row) throw new Error(`installment plan ${id} was not ACTIVE under its lock`);
  return row;
}

/** The plan's card replaced (the customer's card update), and `updated` moved. */
export async function setPlanCard(tx: TxSql, id: string, card: { paymentMethod: string; brand: string | null; last4: string | null }): Promise<PlanRow> {
  const [row] = await tx<PlanRow[]>`
    update installment_plans set processor_payment_method = ${card.paymentMethod}, card_brand = ${card.brand}, card_last4 = ${card.last4}, updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

/** The plan's metadata replaced (the caller merged it under the plan's lock). */
export async function setPlanMetadata(tx: TxSql, id: string, metadata: Record<string, string>): Promise<PlanRow> {
  const [row] = await tx<PlanRow[]>`update installment_plans set metadata = ${tx.json(metadata)}, updated_at = now() where id = ${id} returning *`;
  return row!;
}

export async function touchPlan(tx: TxSql, id: string): Promise<PlanRow> {
  const [row] = await tx<PlanRow[]>`update installment_plans set updated_at = now() where id = ${id} returning *`;
  return row!;
}

export async function listPlans(sql: Sql, o: Owner, p: ListInstallmentPlans): Promise<PlanRow[]> {
  const k = keyset(sql, p);
  const customer = customerOf(p);
  return sql<PlanRow[]>`
    select * from installment_plans
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${customer !== undefined ? sql`and customer_id = ${customer}` : sql``}
      ${p.status !== undefined ? sql`and status = ${p.status}` : sql``}
      ${p.payment_link_id !== undefined ? sql`and payment_link_id = ${p.payment_link_id}` : sql``}
      ${p.invoice_id !== undefined ? sql`and invoice_id = ${p.invoice_id}` : sql``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

export interface DuePart {
  plan_id: string;
  number: number;
  attempt_count: number;
  next_attempt_at: Date;
}

/** Parts of ACTIVE plans of any account due by `before`, soonest first (the repair pass). */
export async function dueParts(sql: Sql, before: Date, limit: number): Promise<DuePart[]> {
  return sql<DuePart[]>`
    select i.plan_id, i.number, i.attempt_count, i.next_attempt_at from installments i
    join installment_plans p on p.id = i.plan_id
    where i.status in ('SCHEDULED', 'RETRYING') and i.next_attempt_at <= ${before} and p.status = 'ACTIVE'
    order by i.next_attempt_at limit ${limit}`;
}

/** The same for one account and mode (the test helpers' advance-time), soonest first. */
export async function duePartsOf(sql: Sql, o: Owner, before: Date, limit: number): Promise<DuePart[]> {
  return sql<DuePart[]>`
    select i.plan_id, i.number, i.attempt_count, i.next_attempt_at from installments i
    join installment_plans p on p.id = i.plan_id
    where p.account_id = ${o.accountId} and p.livemode = ${o.livemode} and p.status = 'ACTIVE'
      and i.status in ('SCHEDULED', 'RETRYING') and i.next_attempt_at <= ${before}
    order by i.next_attempt_at, i.plan_id, i.number limit ${limit}`;
}

/** The ACTIVE plan paying an invoice, if any (an invoice has at most one at a time: its participant refuses a second). */
export async function activePlanOfInvoice(sql: Db, invoiceId: string): Promise<PlanRow | undefined> {
  const [row] = await sql<PlanRow[]>`select * from installment_plans where invoice_id = ${invoiceId} and status = 'ACTIVE' limit 1`;
  return row;
}

/** The processor's twin of the plan's customer (Stripe keeps saved cards on one), and its email and name. */
export async function planCustomer(sql: Db, plan: PlanRow): Promise<{ id: string; email: string; name: string; processor_customer_id: string | null } | undefined> {
  const [row] = await sql<{ id: string; email: string; name: string; processor_customer_id: string | null }[]>`
    select id, email, trim(first_name || ' ' || last_name) as name, processor_customer_id from customers
    where id = ${plan.customer_id} and account_id = ${plan.account_id} and livemode = ${plan.livemode}`;
  return row;
}

/**
 * Where the plan's emails go (notices, the later parts' receipts): its customer's email on file as
 * it is now, or, once the customer is deleted, the one the plan kept when it was made (that
 * customer's then). Never an address a payer typed for someone else's customer (issue 21).
 */
export async function planRecipient(sql: Db, plan: PlanRow): Promise<string> {
  return (await planCustomer(sql, plan))?.email ?? plan.email;
}

export async function storeProcessorCustomer(sql: Db, customerId: string, processorId: string): Promise<string> {
  const [row] = await sql<{ processor_customer_id: string }[]>`
    update customers set processor_customer_id = coalesce(processor_customer_id, ${processorId}) where id = ${customerId}
    returning processor_customer_id`;
  return row?.processor_customer_id ?? processorId;
}
