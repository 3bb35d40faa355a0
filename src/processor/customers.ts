import type { Services } from '../services.ts';
import { processorFor } from './select.ts';

/**
 * Every customer gets its processor-side twin (processor_customer_id). Where the processor makes it
 * without a call (the simulator), the customer's insert records it (`twinAtInsert`). Otherwise it
 * comes from a sweep that runs every second in the processor worker: it reads the work list
 * (processor_customers_due, one row per customer still without a twin, written by the customer's
 * insert) and fills the twins in one statement, which also takes them off the list. Creating a customer therefore costs no job and no
 * Redis round trip, and the rows themselves are the work list, so nothing is lost when Redis is.
 * The list is a table rather than a partial index of customers (as before migration 0043), so that
 * filling a twin changes no indexed column of customers and stays a HOT update.
 */
export const SWEEP_EVERY_MS = 1000;

const BATCH = 500;

/**
 * The twin of a mode's new customers when its processor makes one without a call (the simulator:
 * `customerIdOf`), for the customer's insert to record with it; null where the sweep must call
 * (Stripe) or the mode has no processor (live payments off).
 */
export function twinAtInsert(s: Pick<Services, 'processors'>, livemode: boolean): ((customerId: string) => string) | null {
  const p = processorFor(s, livemode);
  return p?.customerIdOf ? (customerId) => p.customerIdOf!(customerId, livemode) : null;
}

interface Due {
  id: string;
  livemode: boolean;
  /** Null when the customer is gone (deleted) or already has its twin: only taken off the list. */
  email: string | null;
  first_name: string;
  last_name: string;
}

/**
 * Creates the twins of up to 500 customers that have none. Idempotent: the processor answers the
 * same customer for the same reference, and the update skips rows filled meanwhile (two sweeps
 * overlapping, or a retry after a crash, change nothing). Returns how many it filled.
 */
export async function syncProcessorCustomers(s: Services, limit = BATCH): Promise<number> {
  // Live customers wait for live keys (live payments off): they are not read, so they never block the batch.
  const liveOn = processorFor(s, true) !== null;
  const rows = await s.sql<Due[]>`
    select d.id, d.livemode, c.email, c.first_name, c.last_name
    from processor_customers_due d
    left join customers c on c.id = d.id and c.processor_customer_id is null
    ${liveOn ? s.sql`` : s.sql`where not d.livemode`} order by d.id limit ${limit}`;
  if (rows.length === 0) return 0;
  const todo = rows.filter((r) => r.email !== null);
  const twins = await Promise.allSettled(
    todo.map((r) =>
      processorFor(s, r.livemode)!.createCustomer({ reference: r.id, email: r.email!, name: `${r.first_name} ${r.last_name}`.trim(), livemode: r.livemode }),
    ),
  );
  const ids: string[] = [];
  const pids: string[] = [];
  twins.forEach((t, i) => {
    if (t.status === 'fulfilled') {
      ids.push(todo[i]!.id);
      pids.push(t.value.id);
    } else {
      // Left for the next sweep; the others of the batch go ahead.
      s.log.warn({ customerId: todo[i]!.id, err: t.reason }, 'processor customer not created; retrying on the next sweep');
    }
  });
  // Off the list: the customers filled now, and those gone or filled meanwhile.
  const done = [...ids, ...rows.filter((r) => r.email === null).map((r) => r.id)];
  if (done.length === 0) return 0;
  const [row] = await s.sql<{ filled: number }[]>`
    with filled as (
      update customers c set processor_customer_id = v.pid
      from unnest(${ids}::text[], ${pids}::text[]) as v(id, pid)
      where c.id = v.id and c.processor_customer_id is null
      returning c.id
    ), gone as (
      delete from processor_customers_due where id = any(${done}::text[])
    )
    select count(*)::int as filled from filled`;
  return row!.filled;
}
