import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { text } from '../lib/validate.ts';

export const EMAIL_TEMPLATES = ['receipt', 'refund_notice', 'invoice', 'invoice_reminder', 'invitation', 'portal_link', 'installment_failed', 'installment_defaulted'] as const;
export const EMAIL_STATUSES = ['PENDING', 'SENT', 'FAILED'] as const;

/** GET /v1/emails: newest first, filtered by status, template, the object it is about, or recipient (case-insensitive). */
export const ListEmails = listQuerySchema('em', {
  status: z.enum(EMAIL_STATUSES).optional(),
  template: z.enum(EMAIL_TEMPLATES).optional(),
  related_object: text(100).optional(),
  to: text(254).optional(),
});
export type ListEmails = z.infer<typeof ListEmails>;
