import { unix } from '../lib/time.ts';
import type { CustomerRow } from './store.ts';

/** The customer object of the API (spec 2.1); webhook payloads use this same function. */
export function presentCustomer(row: CustomerRow) {
  return {
    id: row.id,
    object: 'customer' as const,
    livemode: row.livemode,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    phone: row.phone,
    company_name: row.company_name,
    notes: row.notes,
    metadata: row.metadata,
    processor_customer_id: row.processor_customer_id,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
export type Customer = ReturnType<typeof presentCustomer>;
