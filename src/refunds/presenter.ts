import { z } from 'zod';
import { amountCents, created, currencyCode, livemode, metadataObject, objectId, objectName, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { REFUND_REASONS } from './schema.ts';
import type { RefundRow } from './store.ts';

/** The refund object (issue 11, point 1). */
export const RefundObject = z
  .strictObject({
    id: objectId('re', 'refund'),
    object: objectName('refund'),
    livemode: livemode(),
    payment_id: z.string().meta({ description: 'The payment refunded.', example: 'pay_01m89emrkt0006k689spej1tdy0e8' }),
    amount_cents: amountCents('The amount given back.'),
    currency: currencyCode(),
    status: z
      .enum(['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED'])
      .meta({ description: '`PENDING` until the processor settles it, then `SUCCEEDED` or `FAILED`; a PENDING refund can be `CANCELLED`.' }),
    reason: z.enum(REFUND_REASONS).nullable().meta({ description: 'Why the merchant refunded, as given on create.' }),
    failure_reason: z.string().nullable().meta({ description: 'Why a FAILED refund failed, such as `declined`.' }),
    metadata: metadataObject(),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'refund', description: 'All or part of a SUCCEEDED payment given back.' });
export type Refund = z.infer<typeof RefundObject>;

/** The refund object (issue 11, point 1); webhook payloads use this same function. */
export function presentRefund(row: RefundRow): Refund {
  return {
    id: row.id,
    object: 'refund',
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
