import type { CustomerRow, Owner } from '../customers/store.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';

/**
 * Every customer gets its processor-side twin (processor_customer_id) through a job enqueued
 * after the customer is created; the API answer does not wait for the processor. A reconciler
 * enqueues the job again for customers still missing it (Redis lost the job, the processor failed
 * more often than the retries allow).
 */
export interface ProcessorCustomerJob {
  a: string; // account id
  l: boolean; // livemode
}

export const JOB_CREATE_CUSTOMER = 'create-customer';
const jobId = (customerId: string) => `pcus-${customerId}`;

/** Called right after a customer is created. Never fails the request: the reconciler is the backstop. */
export async function enqueueProcessorCustomer(s: Services, row: Pick<CustomerRow, 'id' | 'account_id' | 'livemode'>): Promise<void> {
  const data: ProcessorCustomerJob = { a: row.account_id, l: row.livemode };
  try {
    await s.queues.get(QUEUE_NAMES.processor).add(JOB_CREATE_CUSTOMER, data, { jobId: jobId(row.id), removeOnComplete: true });
  } catch (err) {
    s.log.warn({ err, customerId: row.id }, 'could not enqueue processor customer; reconcile will');
  }
}

/** The job: creates the processor customer unless the row already has one. Idempotent. */
export async function syncProcessorCustomer(s: Services, o: Owner, id: string): Promise<'created' | 'exists' | 'missing'> {
  const [row] = await s.sql<Pick<CustomerRow, 'email' | 'first_name' | 'last_name' | 'processor_customer_id'>[]>`
    select email, first_name, last_name, processor_customer_id from customers
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  if (!row) return 'missing'; // deleted meanwhile
  if (row.processor_customer_id) return 'exists';
  // The processor answers the same customer for the same reference, so a retry creates no twin.
  const created = await s.processor.createCustomer({
    reference: id,
    email: row.email,
    name: `${row.first_name} ${row.last_name}`.trim(),
    livemode: o.livemode,
  });
  await s.sql`
    update customers set processor_customer_id = ${created.id}
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} and processor_customer_id is null`;
  return 'created';
}

/** Customers older than this without processor_customer_id have lost their job. */
const GRACE = '30 seconds';

export async function reconcileProcessorCustomers(s: Services): Promise<number> {
  const rows = await s.sql<Pick<CustomerRow, 'id' | 'account_id' | 'livemode'>[]>`
    select id, account_id, livemode from customers
    where processor_customer_id is null and created_at < now() - ${GRACE}::interval
    order by created_at limit 1000`;
  const q = s.queues.get(QUEUE_NAMES.processor);
  for (const row of rows) {
    // A job id still present (a failed job kept for inspection) would make add() a no-op.
    await q.remove(jobId(row.id)).catch(() => 0);
    await enqueueProcessorCustomer(s, row);
  }
  return rows.length;
}
