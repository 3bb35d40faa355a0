import { z } from 'zod';
import { created, objectId, objectName } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import type { AuditRow } from './store.ts';

export const AuditEventObject = z
  .strictObject({
    id: objectId('aud', 'audit event'),
    object: objectName('audit_event'),
    livemode: z.boolean().nullable().meta({ description: 'The mode the change concerns; null for what is account-wide (the team, the account settings).' }),
    action: z.string().meta({ description: 'What was done, `<object>.<verb>`: `api_key.rolled`, `refund.created`, `team.user_removed`, `user.sign_in_failed`…', example: 'api_key.rolled' }),
    actor: z
      .strictObject({
        type: z.enum(['user', 'api_key', 'system']),
        id: z.string().nullable().meta({ description: 'The user (`usr_…`) or API key (`key_…`); null for the service itself.' }),
        label: z.string().nullable().meta({ description: "The user's email or the key's redacted form (`sk_live_…x9Qe`), as it was then: never a secret." }),
      })
      .meta({ description: 'Who made the change.' }),
    object_type: z.string().nullable(),
    object_id: z.string().nullable(),
    ip_address: z.string().nullable().meta({ description: 'The address the request came from.' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'What changed (names and new values of plain fields), never a secret.' }),
    created: created(),
  })
  .meta({ id: 'audit_event', description: 'One security-relevant change, recorded in the transaction of the change; never edited or deleted.' });
export type AuditEvent = z.infer<typeof AuditEventObject>;

export function presentAuditEvent(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    object: 'audit_event',
    livemode: row.livemode,
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    object_type: row.object_type,
    object_id: row.object_id,
    ip_address: row.ip_address,
    data: row.data,
    created: unix(row.created_at),
  };
}
