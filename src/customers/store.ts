import type { Db, Sql } from '../db/sql.ts';
import { emptyFragment, fragmentOnce } from '../lib/fragments.ts';
import { newId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import { mergeMetadata, metadataOnCreate } from '../lib/validate.ts';
import type { CreateCustomer, UpdateCustomer } from './schema.ts';
import type { Owner } from '../lib/owner.ts';

export interface CustomerRow {
  id: string;
  account_id: string;
  livemode: boolean;
  email: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  company_name: string | null;
  notes: string | null;
  metadata: Record<string, string>;
  processor_customer_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The processor's customer of a new customer of ours, when it is known without a call (processor/customers.ts `twinAtInsert`). */
export type TwinOf = (customerId: string) => string;

/**
 * A new customer. With `twinOf` (the simulator), its processor twin is recorded with it; without,
 * the same statement puts it on the processor-twin work list (processor_customers_due), and the
 * sweep of src/processor/customers.ts makes and records its twin about a second later.
 */
export async function insertCustomer(sql: Db, o: Owner, input: CreateCustomer, twinOf: TwinOf | null = null): Promise<CustomerRow> {
  const id = newId('cus');
  const twin = twinOf ? twinOf(id) : null;
  const [row] = await sql<CustomerRow[]>`
    with c as (
      insert into customers (id, account_id, livemode, email, first_name, last_name, phone, company_name, notes, metadata, processor_customer_id)
      values (${id}, ${o.accountId}, ${o.livemode}, ${input.email}, ${input.first_name ?? ''},
              ${input.last_name ?? ''}, ${input.phone ?? null}, ${input.company_name ?? null}, ${input.notes ?? null},
              ${sql.json(metadataOnCreate(input.metadata))}, ${twin})
      returning *
    )${twin === null ? fragmentOnce(sql, twinWorkCte) : emptyFragment(sql)}
    select * from c`;
  return row!;
}

/** The new customer's row on the processor-twin work list, a CTE after `c` (made once per pool or transaction). */
const twinWorkCte = (sql: Db) => sql`, due as (insert into processor_customers_due (id, livemode) select id, livemode from c)`;

export async function findCustomer(sql: Db, o: Owner, id: string): Promise<CustomerRow | undefined> {
  const [row] = await sql<CustomerRow[]>`
    select * from customers where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/** Of `ids`, those that are customers of the owner's account and mode (still there: a customer may be deleted). */
export async function existingCustomerIds(sql: Db, o: Owner, ids: ReadonlyArray<string | null>): Promise<Set<string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    select id from customers where id in ${sql(wanted)} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return new Set(rows.map((r) => r.id));
}

/** Applies a partial update under a row lock, so that concurrent metadata merges do not lose a key. */
export async function updateCustomer(sql: Sql, o: Owner, id: string, patch: UpdateCustomer): Promise<CustomerRow | undefined> {
  return sql.begin(async (tx) => {
    const [current] = await tx<CustomerRow[]>`
      select * from customers where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
    if (!current) return undefined;
    const { metadata, ...fields } = patch;
    const next = { ...fields, metadata: tx.json(mergeMetadata(current.metadata, metadata)) };
    const [row] = await tx<CustomerRow[]>`
      update customers set ${tx(next as Record<string, unknown>)}, updated_at = now()
      where id = ${id} returning *`;
    return row;
  }) as Promise<CustomerRow | undefined>;
}

export async function deleteCustomer(sql: Sql, o: Owner, id: string): Promise<boolean> {
  const rows = await sql`
    delete from customers where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} returning id`;
  return rows.length > 0;
}

export async function listCustomers(sql: Sql, o: Owner, p: PageParams & { email?: string | undefined }): Promise<CustomerRow[]> {
  const k = keyset(sql, p);
  return sql<CustomerRow[]>`
    select * from customers
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${p.email !== undefined ? sql`and email = ${p.email}` : emptyFragment(sql)}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

export type { Owner };
