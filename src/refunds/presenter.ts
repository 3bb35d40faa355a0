import { unix } from '../lib/time.ts';
import type { RefundRow } from './store.ts';

/** The refund object (issue 11, point 1); webhook payloads use this same function. */
export function presentRefund(row: RefundRow) {
  return {
    id: row.id,
    object: 'refund' as const,
    livemode: row.livemode,
    payment_id: row.payment_id,
    amount_cents: row.amount_cents,
    currency: row.currency,
    status: row.status,
    reason: row.reason,
    failure_reason: row.failure_reason,
    metadata: row.metadata,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
export type Refund = ReturnType<typeof presentRefund>;
