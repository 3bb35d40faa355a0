import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { text } from '../lib/validate.ts';

export const ListPayments = listQuerySchema('pay', {
  status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']).optional(),
  customer: text(100).optional(),
});
export type ListPayments = z.infer<typeof ListPayments>;
