import { html, type Html } from '../../pages/html.ts';
import type { AuditRow } from '../../audit/store.ts';
import type { ShellPage } from '../layout.ts';
import { card, filterBar, pager, table, when, type ListPage } from '../widgets.ts';

export const AUDIT_PATH = '/dashboard/audit-log';

/** The actions the log records (issue 25), for the filter. */
export const AUDIT_ACTIONS = [
  'user.signed_in',
  'user.sign_in_failed',
  'team.user_invited',
  'team.role_changed',
  'team.user_removed',
  'team.invitation_revoked',
  'settings.refund_limit_changed',
  'account.settings_updated',
  'api_key.created',
  'api_key.rolled',
  'api_key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'refund.created',
  'dispute.evidence_updated',
  'dispute.evidence_submitted',
  'dispute.accepted',
] as const;

export interface AuditFilterValues {
  actor?: string | undefined;
  action?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

const whatChanged = (d: Record<string, unknown>): string => {
  const parts = Object.entries(d).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const text = parts.join(', ');
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
};

export function auditList(page: ListPage<AuditRow>, users: Array<{ id: string; email: string }>, shown: AuditFilterValues, wasCursor: boolean): ShellPage {
  const body: Html = html`${filterBar(AUDIT_PATH, [
    { kind: 'select', name: 'actor', label: 'User', options: users.map((u) => ({ value: u.id, label: u.email })), value: shown.actor },
    { kind: 'select', name: 'action', label: 'Action', options: AUDIT_ACTIONS.map((a) => ({ value: a, label: a })), value: shown.action },
    { kind: 'text', name: 'from', label: 'From (UTC day)', value: shown.from, placeholder: '2026-11-01' },
    { kind: 'text', name: 'to', label: 'To (UTC day)', value: shown.to, placeholder: '2026-11-30' },
  ])}
${card(
    null,
    html`<p class="muted intro">Every security-relevant change made through the dashboard or the API, newest first: who (a user, or an API key by its last characters), from which address, and what. Kept at least a year; nobody can edit or delete it.</p>
${table<AuditRow>(
      [
        { label: 'When', cell: (e) => when(e.created_at) },
        { label: 'Action', cell: (e) => html`<span class="mono">${e.action}</span>` },
        { label: 'Who', cell: (e) => html`${e.actor_label ?? e.actor_type}${e.actor_type === 'api_key' ? html` <span class="muted">(API key)</span>` : ''}` },
        { label: 'Address', cell: (e) => e.ip_address ?? '—' },
        { label: 'Object', cell: (e) => (e.object_id ? html`<span class="mono">${e.object_id}</span>` : '—') },
        { label: 'Mode', cell: (e) => (e.livemode === null ? 'account' : e.livemode ? 'live' : 'test') },
        { label: 'Details', cell: (e) => whatChanged(e.data) },
      ],
      page.rows,
      null,
      'Nothing recorded for these filters.',
    )}
${pager(AUDIT_PATH, { actor: shown.actor, action: shown.action, from: shown.from, to: shown.to }, page, wasCursor)}`,
  )}`;
  return { section: 'audit-log', title: 'Audit log', body };
}
