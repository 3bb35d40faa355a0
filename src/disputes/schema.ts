import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { text } from '../lib/validate.ts';

export const DISPUTE_STATUSES = ['NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** Long explanations (Stripe's limit for a text evidence field is 20,000 characters). */
const LONG = 20_000;
/** Names, addresses, dates and numbers. */
const SHORT = 500;

/** The evidence fields a merchant may send (Stripe's text fields), each with its length bound. */
export const EVIDENCE_FIELDS = {
  access_activity_log: LONG,
  billing_address: SHORT,
  cancellation_policy_disclosure: LONG,
  cancellation_rebuttal: LONG,
  customer_communication: LONG,
  customer_email_address: SHORT,
  customer_name: SHORT,
  customer_purchase_ip: SHORT,
  duplicate_charge_explanation: LONG,
  product_description: LONG,
  refund_policy_disclosure: LONG,
  refund_refusal_explanation: LONG,
  service_date: SHORT,
  shipping_address: SHORT,
  shipping_carrier: SHORT,
  shipping_date: SHORT,
  shipping_tracking_number: SHORT,
  uncategorized_text: LONG,
} as const;
export type EvidenceField = keyof typeof EVIDENCE_FIELDS;
export type Evidence = Partial<Record<EvidenceField, string>>;

// Each field: a string within its bound, or null / "" to clear it (as metadata values).
const evidenceShape = Object.fromEntries(
  Object.entries(EVIDENCE_FIELDS).map(([k, max]) => [k, text(max).nullable().optional().meta({ description: `Up to ${max} characters; null or "" clears it.` })]),
) as { [K in EvidenceField]: z.ZodOptional<z.ZodNullable<z.ZodString>> };

export const UpdateDispute = z.strictObject({
  evidence: z.strictObject(evidenceShape).optional().meta({ description: 'Evidence to save, merged field by field into what was saved before.' }),
  submit: z
    .boolean({ error: 'must be a boolean' })
    .optional()
    .meta({ description: 'True sends the evidence (with this request\'s) to the processor for a decision: the dispute becomes UNDER_REVIEW.' }),
});
export type UpdateDispute = z.infer<typeof UpdateDispute>;

export const CloseDispute = z.strictObject({});

export const ListDisputes = listQuerySchema('dp', {
  payment_id: text(100).optional(),
  status: z.enum(DISPUTE_STATUSES).optional(),
});
export type ListDisputes = z.infer<typeof ListDisputes>;
