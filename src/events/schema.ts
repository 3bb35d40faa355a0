import { z } from 'zod';
import { listQuerySchema, queryInt } from '../lib/pagination.ts';
import { MAX_UNIX_SECONDS } from '../lib/validate.ts';
import { EVENT_TYPE_NAMES, isEventType } from './catalogue.ts';

const unixTime = (name: string, description: string) =>
  queryInt(0, MAX_UNIX_SECONDS, `${name} must be a Unix timestamp in seconds, between 0 and ${MAX_UNIX_SECONDS}`)
    .optional()
    .meta({ description });

export const ListEvents = listQuerySchema('evt', {
  type: z
    .string()
    .refine(isEventType, `must be one of ${EVENT_TYPE_NAMES.join(', ')}`)
    .optional()
    // The document lists the types (zod-openapi's override; the refine above is what validates).
    .meta({ description: 'Only the events of this type.', override: { enum: [...EVENT_TYPE_NAMES] } }),
  'created[gte]': unixTime('created[gte]', 'Only the events created at or after this time, Unix seconds.'),
  'created[lte]': unixTime('created[lte]', 'Only the events created at or before this time, Unix seconds.'),
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
