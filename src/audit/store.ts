import type { Db } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';

/**
 * Who made a change (issue 25): a dashboard user, an API key (its id and redacted form, never the
 * secret), or the service itself (a repair pass, an endpoint disabled for its failures).
 */
export type AuditActor =
  | { type: 'user'; id: string; label: string; ip: string | null }
  | { type: 'api_key'; id: string; label: string; ip: string | null }
  | { type: 'system'; label: string };

export interface AuditEntry {
  accountId: string;
  /** The mode the change concerns; null for what is account-wide (team, account settings). */
  livemode: boolean | null;
  actor: AuditActor;
  /** `<object>.<verb>`, past tense: `api_key.rolled`, `webhook_endpoint.disabled`, `team.user_removed`. */
  action: string;
  object?: { type: string; id: string };
  /** What changed (names and new values of plain fields), never a secret. */
  data?: Record<string, unknown>;
}

/**
 * Appends one audit event, on the transaction of the change it records (DESIGN 13): both commit or
 * neither does. The table refuses updates and deletes.
 */
export async function recordAudit(sql: Db, e: AuditEntry): Promise<string> {
  const id = newId('aud');
  const actorId = e.actor.type === 'system' ? null : e.actor.id;
  const ip = e.actor.type === 'system' ? null : e.actor.ip;
  await sql`
    insert into audit_events (id, account_id, livemode, actor_type, actor_id, actor_label, action, object_type, object_id, ip_address, data)
    values (${id}, ${e.accountId}, ${e.livemode}, ${e.actor.type}, ${actorId}, ${e.actor.label}, ${e.action},
            ${e.object?.type ?? null}, ${e.object?.id ?? null}, ${ip}, ${sql.json((e.data ?? {}) as never)})`;
  return id;
}

export interface AuditRow {
  id: string;
  account_id: string;
  livemode: boolean | null;
  actor_type: 'user' | 'api_key' | 'system';
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  object_type: string | null;
  object_id: string | null;
  ip_address: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface AuditFilters {
  actor?: string | undefined;
  action?: string | undefined;
  createdGte?: number | undefined;
  createdLte?: number | undefined;
}

/**
 * The account's audit events of one mode and the account-wide ones (livemode null), newest first,
 * keyset-paged like every list.
 */
export async function listAuditEvents(
  sql: Db,
  accountId: string,
  livemode: boolean,
  p: PageParams,
  f: AuditFilters,
): Promise<AuditRow[]> {
  const k = keyset(sql as never, p);
  return sql<AuditRow[]>`
    select * from audit_events
    where account_id = ${accountId} and (livemode = ${livemode} or livemode is null)
      ${f.actor !== undefined ? sql`and actor_id = ${f.actor}` : sql``}
      ${f.action !== undefined ? sql`and action = ${f.action}` : sql``}
      ${f.createdGte !== undefined ? sql`and created_at >= to_timestamp(${f.createdGte})` : sql``}
      ${f.createdLte !== undefined ? sql`and created_at <= to_timestamp(${f.createdLte})` : sql``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}
