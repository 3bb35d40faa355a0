import { z } from 'zod';
import { MAX_AMOUNT } from '../lib/currency.ts';
import { listQuerySchema } from '../lib/pagination.ts';
import { metadataSchema, text } from '../lib/validate.ts';

export const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

const amountMessage = `must be a positive integer in the smallest currency unit, at most ${MAX_AMOUNT}`;

/** POST /v1/refunds. `amount` defaults to what is left to refund of the payment. */
export const CreateRefund = z.strictObject({
  payment_id: text(100),
  amount: z
    .number({ error: amountMessage })
    .int(amountMessage)
    .min(1, amountMessage)
    .max(MAX_AMOUNT, amountMessage)
    .optional()
    .meta({ description: 'How much to give back, in the smallest currency unit; by default whatever is left to refund.' }),
  reason: z.enum(REFUND_REASONS).nullable().optional(),
  metadata: metadataSchema.nullable().optional(),
});
export type CreateRefund = z.infer<typeof CreateRefund>;

export const CancelRefund = z.strictObject({});

export const ListRefunds = listQuerySchema('re', { payment_id: text(100).optional() });
export type ListRefunds = z.infer<typeof ListRefunds>;
