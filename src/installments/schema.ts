import { z } from 'zod';
import { customerFilter, listQuerySchema } from '../lib/pagination.ts';
import { metadataSchema, text } from '../lib/validate.ts';

export const PLAN_STATUSES = ['ACTIVE', 'COMPLETED', 'DEFAULTED', 'CANCELLED'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
export const PART_STATUSES = ['SCHEDULED', 'PAID', 'RETRYING', 'FAILED', 'CANCELLED'] as const;
export type PartStatus = (typeof PART_STATUSES)[number];

/** GET /v1/installment-plans: newest first, filtered by customer, status, link or invoice. */
export const ListInstallmentPlans = listQuerySchema('ip', {
  ...customerFilter,
  status: z.enum(PLAN_STATUSES).optional().meta({ description: 'Only the plans in this status.' }),
  payment_link_id: text(100).optional().meta({ description: 'Only the plans of this payment link (`pl_…`).' }),
  invoice_id: text(100).optional().meta({ description: 'Only the plans paying this invoice (`in_…`).' }),
});
export type ListInstallmentPlans = z.infer<typeof ListInstallmentPlans>;

/** PATCH /v1/installment-plans/:id: the merchant's own key/value pairs; the schedule and the card are the payer's agreement. */
export const UpdateInstallmentPlan = z.strictObject({
  metadata: metadataSchema.nullable().optional(),
});
export type UpdateInstallmentPlan = z.infer<typeof UpdateInstallmentPlan>;

/** POST /v1/installment-plans/:id/cancel takes no parameters. */
export const CancelInstallmentPlan = z.strictObject({});
