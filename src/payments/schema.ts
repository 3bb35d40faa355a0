import { z } from 'zod';
import { customerFilter, listQuerySchema } from '../lib/pagination.ts';

export const ListPayments = listQuerySchema('pay', {
  status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']).optional(),
  ...customerFilter,
});
export type ListPayments = z.infer<typeof ListPayments>;
