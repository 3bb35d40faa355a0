import type { Services } from '../services.ts';
import { processorFor } from './select.ts';

/**
 * Every customer gets its processor-side twin (processor_customer_id) from a sweep that runs every
 * second in the processor worker: it reads, through a partial index, the customers still without
 * one and fills them in one statement. Creating a customer therefore costs no job and no Redis
 * round trip, and the rows themselves are the work list, so nothing is lost when Redis is.
 */
export const SWEEP_EVERY_MS = 1000;
const BATCH = 500;

interface MissingTwin {
  id: string;
  livemode: boolean;
  email: string;
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
  const rows = await s.sql<MissingTwin[]>`
    select id, livemode, email, first_name, last_name from customers
    where processor_customer_id is null ${liveOn ? s.sql`` : s.sql`and not livemode`} order by id limit ${limit}`;
  if (rows.length === 0) return 0;
  const twins = await Promise.allSettled(
    rows.map((r) =>
      processorFor(s, r.livemode)!.createCustomer({ reference: r.id, email: r.email, name: `${r.first_name} ${r.last_name}`.trim(), livemode: r.livemode }),
    ),
  );
  const ids: string[] = [];
  const pids: string[] = [];
  twins.forEach((t, i) => {
    if (t.status === 'fulfilled') {
      ids.push(rows[i]!.id);
      pids.push(t.value.id);
    } else {
      // Left for the next sweep; the others of the batch go ahead.
      s.log.warn({ customerId: rows[i]!.id, err: t.reason }, 'processor customer not created; retrying on the next sweep');
    }
  });
  if (ids.length === 0) return 0;
  const updated = await s.sql`
    update customers c set processor_customer_id = v.pid
    from unnest(${ids}::text[], ${pids}::text[]) as v(id, pid)
    where c.id = v.id and c.processor_customer_id is null`;
  return updated.count;
}
