import { z } from 'zod';
import { amountCents, created, currencyCode, livemode, objectId, objectName, unixTime, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { DISPUTE_STATUSES, EVIDENCE_FIELDS, type EvidenceField } from './schema.ts';
import type { DisputeRow } from './store.ts';

const evidenceShape = Object.fromEntries(
  Object.entries(EVIDENCE_FIELDS).map(([k, max]) => [k, z.string().nullable().meta({ description: `Text, up to ${max.toLocaleString('en')} characters.` })]),
) as { [K in EvidenceField]: z.ZodNullable<z.ZodString> };

/** The dispute object. */
export const DisputeObject = z
  .strictObject({
    id: objectId('dp', 'dispute'),
    object: objectName('dispute'),
    livemode: livemode(),
    payment_id: z.string().meta({ description: 'The disputed payment.', example: 'pay_01m89emrkt0006k689spej1tdy0e8' }),
    amount_cents: amountCents('The amount the cardholder disputes.'),
    currency: currencyCode(),
    reason: z.string().meta({ description: "The processor's reason, such as `fraudulent` or `product_not_received`.", example: 'fraudulent' }),
    status: z
      .enum(DISPUTE_STATUSES)
      .meta({ description: '`NEEDS_RESPONSE` until evidence is submitted (`UNDER_REVIEW`) or the loss accepted; `WON` or `LOST` once decided.' }),
    evidence: z.strictObject(evidenceShape).meta({ description: 'The evidence saved so far: every field, null when unset.' }),
    evidence_due_by: unixTime('The date to answer by.'),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'dispute', description: "A chargeback: the cardholder's bank takes a payment back unless the merchant's evidence wins." });
export type Dispute = z.infer<typeof DisputeObject>;

/** The dispute object; webhook payloads use this same function. Every evidence field is shown, null when unset. */
export function presentDispute(row: DisputeRow): Dispute {
  const evidence = Object.fromEntries(Object.keys(EVIDENCE_FIELDS).map((k) => [k, row.evidence[k as EvidenceField] ?? null])) as Record<
    EvidenceField,
    string | null
  >;
  return {
    id: row.id,
    object: 'dispute',
    livemode: row.livemode,
    payment_id: row.payment_id,
    amount_cents: row.amount_cents,
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    evidence,
    evidence_due_by: unix(row.evidence_due_by),
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
