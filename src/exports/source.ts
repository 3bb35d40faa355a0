import type postgres from 'postgres';
import type { Db } from '../db/sql.ts';
import type { Owner } from '../lib/owner.ts';
import type { Dataset } from './columns.ts';
import type { ExportQuery } from './schema.ts';

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** Rows are read this many at a time: memory holds one page, whatever the export's size. */
export const BATCH = 2000;

/** Where the next page starts: after this id (and, for installment parts, this part number of its plan). */
interface After {
  id: string;
  number: number;
}

/**
 * The rows of an export, oldest first (by id, which is time-ordered), within the owner's account
 * and mode, the range and the filters: one keyset page of BATCH rows at a time, each its own short
 * statement. No transaction and no cursor is held while `each` writes a page to a client or a
 * file: a slow reader slows the export, never holds a connection or a snapshot (DESIGN 7's "no
 * transaction across a network call"). The price: the file is not one snapshot; a row changed
 * while the export runs appears as it was when its page was read.
 */
export async function eachBatch(db: Db, o: Owner, d: Dataset, q: ExportQuery, each: (rows: postgres.Row[]) => Promise<void>): Promise<void> {
  let after: After | null = null;
  for (;;) {
    const rows = await page(db, o, d, q, after);
    if (rows.length) await each(rows);
    if (rows.length < BATCH) return;
    const last = rows[rows.length - 1]!;
    after = d === 'installment-parts' ? { id: last.plan_id as string, number: Number(last.number) } : { id: last.id as string, number: 0 };
  }
}

/** How many rows the export holds, counted up to `limit` (an index scan that stops there). */
export async function countUpTo(db: Db, o: Owner, d: Dataset, q: ExportQuery, limit: number): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from (${statement(db, o, d, q, null, limit, true)}) x`;
  return row!.n;
}

function page(db: Db, o: Owner, d: Dataset, q: ExportQuery, after: After | null): Fragment {
  return statement(db, o, d, q, after, BATCH);
}

function statement(sql: Db, o: Owner, d: Dataset, q: ExportQuery, after: After | null, limit: number, countOnly = false): Fragment {
  // Counting reads no column: the index of the filters can answer alone.
  const cols = (all: string) => sql.unsafe(countOnly ? '1' : all);
  const owner = (alias = '') => sql`${sql.unsafe(alias)}account_id = ${o.accountId} and ${sql.unsafe(alias)}livemode = ${o.livemode}`;
  const range = (col: string): Fragment =>
    sql`${q.created_gte !== undefined ? sql`and ${sql.unsafe(col)} >= ${new Date(q.created_gte * 1000)}` : sql``}
      ${q.created_lt !== undefined ? sql`and ${sql.unsafe(col)} < ${new Date(q.created_lt * 1000)}` : sql``}`;
  const status = (col = 'status') => (q.status ? sql`and ${sql.unsafe(col)} = ${q.status.toUpperCase()}` : sql``);
  const customer = (col = 'customer_id') => (q.customer ? sql`and ${sql.unsafe(col)} = ${q.customer}` : sql``);
  const next = after ? sql`and id > ${after.id}` : sql``;
  const lim = sql.unsafe(String(limit));
  const table = (name: string, withStatus: boolean, withCustomer: boolean): Fragment =>
    sql`select ${cols('*')} from ${sql(name)} where ${owner()} ${range('created_at')} ${withStatus ? status() : sql``}
      ${withCustomer ? customer() : sql``} ${next} order by id limit ${lim}`;

  switch (d) {
    case 'payments':
      return table('payments', true, true);
    case 'refunds':
      return table('refunds', true, false);
    case 'disputes':
      return table('disputes', true, false);
    case 'customers':
      return table('customers', false, false);
    case 'invoices':
      return table('invoices', true, true);
    case 'installment-parts':
      // A part belongs to its plan: the plan's account, mode, customer and creation time.
      return sql`
        select ${cols('i.*, p.created_at, p.currency, p.customer_id, p.email')}
        from installment_plans p join installments i on i.plan_id = p.id
        where ${owner('p.')} ${range('p.created_at')} ${status('i.status')} ${customer('p.customer_id')}
          ${after ? sql`and (p.id, i.number) > (${after.id}, ${after.number})` : sql``}
        order by p.id, i.number limit ${lim}`;
  }
}
