import { z } from 'zod';
import { listQuerySchema, queryInt } from '../lib/pagination.ts';
import { MAX_UNIX_SECONDS, text } from '../lib/validate.ts';

const unixTime = (name: string, description: string) =>
  queryInt(0, MAX_UNIX_SECONDS, `${name} must be a Unix timestamp in seconds, between 0 and ${MAX_UNIX_SECONDS}`)
    .optional()
    .meta({ description });

/** GET /v1/audit-events: newest first, by actor (a user's or a key's id), action and time. */
export const ListAuditEvents = listQuerySchema('aud', {
  actor: text(100).optional().meta({ description: 'Only the changes made by this user (`usr_…`) or API key (`key_…`).' }),
  action: z
    .string()
    .regex(/^[a-z_]+\.[a-z_]+$/, 'must be an action such as api_key.rolled')
    .optional()
    .meta({ description: 'Only this action, such as `api_key.rolled` or `team.role_changed`.' }),
  'created[gte]': unixTime('created[gte]', 'Only the changes made at or after this time, Unix seconds.'),
  'created[lte]': unixTime('created[lte]', 'Only the changes made at or before this time, Unix seconds.'),
});
export type ListAuditEvents = z.infer<typeof ListAuditEvents>;
