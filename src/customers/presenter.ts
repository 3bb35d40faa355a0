import { z } from 'zod';
import { created, livemode, metadataObject, objectId, objectName, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import type { CustomerRow } from './store.ts';

/** The customer object of the API (spec 2.1). */
export const CustomerObject = z
  .strictObject({
    id: objectId('cus', 'customer'),
    object: objectName('customer'),
    livemode: livemode(),
    email: z.string().meta({ description: 'Where receipts and invoices are sent.', example: 'ada@example.com' }),
    first_name: z.string().meta({ description: 'Given name.' }),
    last_name: z.string().meta({ description: 'Family name.' }),
    phone: z.string().nullable().meta({ description: 'Free format.' }),
    company_name: z.string().nullable().meta({ description: 'Business name shown on invoices.' }),
    notes: z.string().nullable().meta({ description: 'Internal notes, never shown to the customer.' }),
    metadata: metadataObject(),
    processor_customer_id: z
      .string()
      .nullable()
      .meta({ description: "Set by the service: the id of the matching customer at the card processor (Stripe's `cus_…`), once made." }),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'customer', description: 'A person or business that is billed.' });
export type Customer = z.infer<typeof CustomerObject>;

/** The customer object of the API (spec 2.1); webhook payloads use this same function. */
export function presentCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    object: 'customer',
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
