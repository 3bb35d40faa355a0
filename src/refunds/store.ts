import type { Db, Sql, TxSql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';
import { keyset } from '../lib/pagination.ts';
import type { ListRefunds, RefundReason } from './schema.ts';
import { countRefund } from '../reports/store.ts';

export type RefundStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

export interface RefundRow {
  id: string;
  account_id: string;
  livemode: boolean;
  payment_id: string;
  amount_cents: number;
  currency: string;
  status: RefundStatus;
  reason: RefundReason | null;
  failure_reason: string | null;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

export interface NewRefund {
  payment_id: string;
  amount_cents: number;
  currency: string;
  reason: RefundReason | null;
  metadata: Record<string, string>;
}

/**
 * What is taken of a payment's amount: its PENDING and SUCCEEDED refunds. Read under the payment's
 * row lock, in the transaction that inserts the next refund, so the sum can never pass the amount.
 */
export async function reservedAmount(sql: TxSql, paymentId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(amount_cents), 0)::bigint as n from refunds
    where payment_id = ${paymentId} and status in ('PENDING', 'SUCCEEDED')`;
  return row!.n;
}

export async function insertRefund(sql: TxSql, o: Owner, r: NewRefund): Promise<RefundRow> {
  const [row] = await sql<RefundRow[]>`
    insert into refunds (id, account_id, livemode, payment_id, amount_cents, currency, reason, metadata)
    values (${newId('re')}, ${o.accountId}, ${o.livemode}, ${r.payment_id}, ${r.amount_cents}, ${r.currency},
      ${r.reason}, ${sql.json(r.metadata)})
    returning *`;
  return row!;
}

export async function findRefund(sql: Db, o: Owner, id: string): Promise<RefundRow | undefined> {
  const [row] = await sql<RefundRow[]>`
    select * from refunds where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/**
 * Moves a PENDING refund to its outcome; undefined when it is no longer PENDING (the request, the
 * job, the sweeper or a cancel recorded an outcome first: the first one stands).
 */
export async function settle(sql: TxSql, id: string, status: Exclude<RefundStatus, 'PENDING'>, failureReason: string | null = null): Promise<RefundRow | undefined> {
  const [row] = await sql<RefundRow[]>`
    update refunds set status = ${status}, failure_reason = ${failureReason}, updated_at = now()
    where id = ${id} and status = 'PENDING'
    returning *`;
  if (row?.status === 'SUCCEEDED') await countRefund(sql, row); // the reports' rollup, in this transaction
  return row;
}

export async function listRefunds(sql: Sql, o: Owner, p: ListRefunds): Promise<RefundRow[]> {
  const k = keyset(sql, p);
  return sql<RefundRow[]>`
    select * from refunds
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${p.payment_id !== undefined ? sql`and payment_id = ${p.payment_id}` : sql``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

/** Every refund of a payment, oldest first (the hosted receipt lists them). */
export async function refundsOfPayment(sql: Db, o: Owner, paymentId: string): Promise<RefundRow[]> {
  return sql<RefundRow[]>`
    select * from refunds
    where account_id = ${o.accountId} and livemode = ${o.livemode} and payment_id = ${paymentId}
    order by id`;
}

/** Refunds PENDING since before `before`: their job was lost, or a crash came before the processor call. */
export async function stuckPending(sql: Sql, before: Date, limit: number): Promise<RefundRow[]> {
  return sql<RefundRow[]>`
    select * from refunds where status = 'PENDING' and created_at < ${before}
    order by created_at limit ${limit}`;
}

/** A refund by id alone, for jobs and the sweeper, which carry no API key. */
export async function findRefundById(sql: Db, id: string): Promise<RefundRow | undefined> {
  const [row] = await sql<RefundRow[]>`select * from refunds where id = ${id}`;
  return row;
}

/** PENDING refunds of the payments of an intent (Stripe's charge.refunded names the intent). */
export async function pendingOfIntent(sql: Db, intentId: string, livemode: boolean): Promise<RefundRow[]> {
  return sql<RefundRow[]>`
    select r.* from refunds r join payments p on p.id = r.payment_id
    where p.payment_intent_id = ${intentId} and r.livemode = ${livemode} and r.status = 'PENDING'
    order by r.id`;
}
