import type { Db } from '../db/sql.ts';
import { invalidParam } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';

/**
 * A `customer_id` sent on another resource (a session, a link) must name a customer of the same
 * account and mode; anything else is a 400 naming the parameter. null and absent pass.
 */
export async function checkCustomerRef(sql: Db, o: Owner, id: string | null | undefined): Promise<void> {
  if (id == null) return;
  const rows = await sql`select 1 from customers where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  if (rows.length === 0) throw invalidParam('customer_id', `No such customer: '${id}'`);
}
