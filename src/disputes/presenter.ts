import { unix } from '../lib/time.ts';
import { EVIDENCE_FIELDS, type EvidenceField } from './schema.ts';
import type { DisputeRow } from './store.ts';

/** The dispute object; webhook payloads use this same function. Every evidence field is shown, null when unset. */
export function presentDispute(row: DisputeRow) {
  const evidence = Object.fromEntries(Object.keys(EVIDENCE_FIELDS).map((k) => [k, row.evidence[k as EvidenceField] ?? null])) as Record<
    EvidenceField,
    string | null
  >;
  return {
    id: row.id,
    object: 'dispute' as const,
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
export type Dispute = ReturnType<typeof presentDispute>;
