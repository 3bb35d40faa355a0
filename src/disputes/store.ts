import type { Sql, TxSql } from '../db/sql.ts';
import { keyset } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';
import type { DisputeStatus, Evidence, ListDisputes } from './schema.ts';

export type PendingAction = 'submit' | 'close';

export interface DisputeRow {
  id: string;
  account_id: string;
  livemode: boolean;
  payment_id: string;
  processor_dispute_id: string;
  processor_created_at: Date;
  amount_cents: number;
  currency: string;
  reason: string;
  status: DisputeStatus;
  evidence: Evidence;
  evidence_due_by: Date;
  /** A processor call committed and not yet answered (the sweeper repeats it after a crash). */
  pending_action: PendingAction | null;
  action_since: Date | null;
  submitted_at: Date | null;
  closed_at: Date | null;
  checked_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewDispute = Pick<
  DisputeRow,
  'id' | 'payment_id' | 'processor_dispute_id' | 'processor_created_at' | 'amount_cents' | 'currency' | 'reason' | 'status' | 'evidence_due_by'
>;

/** Records a dispute once: answers undefined when the processor's dispute is already recorded. */
export async function insertDispute(sql: TxSql, o: Owner, d: NewDispute): Promise<DisputeRow | undefined> {
  const [row] = await sql<DisputeRow[]>`
    insert into disputes (id, account_id, livemode, payment_id, processor_dispute_id, processor_created_at, amount_cents,
      currency, reason, status, evidence_due_by, closed_at)
    values (${d.id}, ${o.accountId}, ${o.livemode}, ${d.payment_id}, ${d.processor_dispute_id}, ${d.processor_created_at},
      ${d.amount_cents}, ${d.currency}, ${d.reason}, ${d.status}, ${d.evidence_due_by},
      ${d.status === 'WON' || d.status === 'LOST' ? new Date() : null})
    on conflict (processor_dispute_id) do nothing
    returning *`;
  return row;
}

/**
 * The payment a processor dispute names (our payment id), whoever owns it: the processor knows no
 * account. Read here rather than through payments/ because only the sync needs it.
 */
export async function paymentForDispute(sql: TxSql, paymentId: string, livemode: boolean) {
  // The simulator names our payment; Stripe names the payment's intent (pi_…), whose SUCCEEDED payment it is.
  const [row] = await sql<{ id: string; account_id: string; livemode: boolean; status: string; currency: string }[]>`
    select id, account_id, livemode, status, currency from payments
    where livemode = ${livemode} and (id = ${paymentId} or (payment_intent_id = ${paymentId} and status = 'SUCCEEDED'))
    order by (status = 'SUCCEEDED') desc limit 1
    for update`;
  return row;
}

/** Our dispute of a processor dispute (the processor's events name it by its own id). */
export async function findByProcessorId(sql: Sql | TxSql, processorDisputeId: string): Promise<DisputeRow | undefined> {
  const [row] = await sql<DisputeRow[]>`select * from disputes where processor_dispute_id = ${processorDisputeId}`;
  return row;
}

/** payments.disputed (migration 0009), set in the transaction that records the dispute. */
export async function markPaymentDisputed(sql: TxSql, o: Owner, paymentId: string): Promise<void> {
  await sql`
    update payments set disputed = true, updated_at = now()
    where id = ${paymentId} and account_id = ${o.accountId} and livemode = ${o.livemode} and not disputed`;
}

export async function findDispute(sql: Sql | TxSql, o: Owner, id: string): Promise<DisputeRow | undefined> {
  const [row] = await sql<DisputeRow[]>`
    select * from disputes where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

export async function lockDispute(sql: TxSql, o: Owner, id: string): Promise<DisputeRow | undefined> {
  const [row] = await sql<DisputeRow[]>`
    select * from disputes where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
  return row;
}

export async function listDisputes(sql: Sql, o: Owner, q: ListDisputes): Promise<DisputeRow[]> {
  const k = keyset(sql, q);
  return sql<DisputeRow[]>`
    select * from disputes
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${q.payment_id !== undefined ? sql`and payment_id = ${q.payment_id}` : sql``}
      ${q.status !== undefined ? sql`and status = ${q.status}` : sql``}
      ${k.where}
    ${k.order}
    limit ${k.limit}`;
}

export async function updateDispute(
  sql: TxSql,
  id: string,
  set: Partial<Pick<DisputeRow, 'evidence' | 'status' | 'pending_action' | 'action_since' | 'submitted_at' | 'closed_at'>>,
): Promise<DisputeRow> {
  const values: Record<string, unknown> = { ...set, updated_at: new Date() };
  if (set.evidence) values.evidence = sql.json(set.evidence);
  const [row] = await sql<DisputeRow[]>`update disputes set ${sql(values)} where id = ${id} returning *`;
  return row!;
}

/** The sync's lower bound: disputes created by the processor since the newest one recorded, less an overlap. */
export async function syncSince(sql: Sql, livemode: boolean, overlapMs: number): Promise<Date | null> {
  const [row] = await sql<{ since: Date | null }[]>`
    select max(processor_created_at) - make_interval(secs => ${overlapMs / 1000}) as since from disputes where livemode = ${livemode}`;
  return row?.since ?? null;
}

/** Disputes UNDER_REVIEW, least recently asked about first; marked asked. */
export async function takeUnderReview(sql: Sql, limit: number): Promise<DisputeRow[]> {
  return sql<DisputeRow[]>`
    update disputes set checked_at = now()
    where id in (select id from disputes where status = 'UNDER_REVIEW' and pending_action is null
                 order by checked_at nulls first limit ${limit})
    returning *`;
}

/** Processor calls committed before `before` and still unanswered: left by a crash or a failed call. */
export async function stuckActions(sql: Sql, before: Date, limit: number): Promise<DisputeRow[]> {
  return sql<DisputeRow[]>`
    select * from disputes where action_since is not null and action_since < ${before} order by action_since limit ${limit}`;
}
