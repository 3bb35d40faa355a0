import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { EVENT_TYPE_NAMES, isEventType } from './catalogue.ts';

const unixTime = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a Unix timestamp in seconds` })
    .int(`${name} must be a Unix timestamp in seconds`)
    .min(0, `${name} must be a Unix timestamp in seconds`)
    .optional();

export const ListEvents = listQuerySchema('evt', {
  type: z
    .string()
    .refine(isEventType, `must be one of ${EVENT_TYPE_NAMES.join(', ')}`)
    .optional(),
  'created[gte]': unixTime('created[gte]'),
  'created[lte]': unixTime('created[lte]'),
});
export type ListEvents = z.infer<typeof ListEvents>;

/**
 * Express's default (simple) query parser hands `created[gte]` over as a flat key; a nested parser
 * would give `{ created: { gte } }`. Both spellings reach the schema flat.
 */
export function flattenCreated(query: Record<string, unknown>): Record<string, unknown> {
  const { created, ...rest } = query;
  if (created && typeof created === 'object' && !Array.isArray(created)) {
    for (const [op, v] of Object.entries(created)) rest[`created[${op}]`] = v;
    return rest;
  }
  return query;
}

export const ResendEvent = z.strictObject({
  endpoint_id: z.string().optional(),
});
export type ResendEvent = z.infer<typeof ResendEvent>;

export const ListDeliveries = listQuerySchema('wd', {});
export type ListDeliveries = z.infer<typeof ListDeliveries>;
