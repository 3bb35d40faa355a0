import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { text } from '../lib/validate.ts';

export const EMAIL_TEMPLATES = ['receipt', 'refund_notice', 'invoice', 'invoice_reminder', 'invitation', 'portal_link', 'installment_failed', 'installment_defaulted', 'webhook_endpoint_failing', 'webhook_endpoint_disabled'] as const;
/**
 * What GET /v1/emails says of an email: `LOGGED` is an email that left through the log because
 * SMTP_URL is unset (stored as SENT with transport `log`: nobody received it).
 */
export const EMAIL_STATUSES = ['PENDING', 'SENT', 'LOGGED', 'FAILED'] as const;
export type EmailApiStatus = (typeof EMAIL_STATUSES)[number];

/** GET /v1/emails: newest first, filtered by status, template, the object it is about, or recipient (case-insensitive). */
export const ListEmails = listQuerySchema('em', {
  status: z.enum(EMAIL_STATUSES).optional(),
  template: z.enum(EMAIL_TEMPLATES).optional(),
  related_object: text(100).optional(),
  to: text(254).optional(),
});
export type ListEmails = z.infer<typeof ListEmails>;
