import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { metadataSchema, text } from '../lib/validate.ts';

const email = text().pipe(z.email('must be a valid email address'));

/** Writable fields. System fields (id, processor_customer_id, created, …) are unknown here, so refused. */
const writable = {
  email,
  first_name: text(),
  last_name: text(),
  phone: text().nullable(),
  company_name: text().nullable(),
  notes: text(5000).nullable(),
  metadata: metadataSchema.nullable(),
};

export const CreateCustomer = z.strictObject({ ...writable, email }).partial().required({ email: true });
export type CreateCustomer = z.infer<typeof CreateCustomer>;

export const UpdateCustomer = z.strictObject(writable).partial();
export type UpdateCustomer = z.infer<typeof UpdateCustomer>;

export const ListCustomers = listQuerySchema('cus', { email: text().optional() });
export type ListCustomers = z.infer<typeof ListCustomers>;
