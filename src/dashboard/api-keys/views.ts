import { ACCESS, RESOURCE_NAMES } from '../../auth/scopes.ts';
import type { ApiKeyRow } from '../../auth/store.ts';
import { html, type Html } from '../../pages/html.ts';
import type { ShellPage } from '../layout.ts';
import {
  alertBox,
  badge,
  buttonForm,
  card,
  confirmPanel,
  copyable,
  facts,
  formError,
  pager,
  select,
  table,
  when,
  type FormState,
  type Forms,
  type ListPage,
  type SelectOption,
} from '../widgets.ts';

const BASE = '/dashboard/api-keys';
export const keyPath = (id: string): string => `${BASE}/${id}`;

/** How long a rolled key keeps working (the API's expires_in, seconds). */
export const OVERLAPS: SelectOption[] = [
  { value: '0', label: 'Stop it now' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
  { value: '259200', label: '3 days' },
  { value: '604800', label: '7 days' },
];

export type KeyStatus = 'Active' | 'Expiring' | 'Expired' | 'Revoked';

/** Where a key stands: revoked, past its expires_at, rolled and still in its overlap, or active. */
export function keyStatus(k: ApiKeyRow, now = new Date()): KeyStatus {
  if (k.revoked_at) return 'Revoked';
  if (k.expires_at && k.expires_at <= now) return 'Expired';
  if (k.expires_at) return 'Expiring';
  return 'Active';
}

const TONE = { Active: 'good', Expiring: 'warn', Expired: 'plain', Revoked: 'bad' } as const;
const statusOf = (k: ApiKeyRow) => badge(keyStatus(k), TONE[keyStatus(k)]);

/** What the dashboard shows of a key: its mode's prefix and its last four characters. */
export const maskedKey = (k: Pick<ApiKeyRow, 'livemode' | 'last4'>): string => `sk_${k.livemode ? 'live' : 'test'}_…${k.last4}`;

const modeWord = (livemode: boolean) => (livemode ? 'live' : 'test');

/** What keys of this mode are, said plainly on every page of the section. */
function modeNote(livemode: boolean): Html {
  return livemode
    ? html`<div class="alert warn" role="note"><strong>Live mode.</strong> Keys made here are <strong>live keys</strong> (<code>sk_live_…</code>): they take real payments and move real money. Give them only to servers you trust.</div>`
    : html`<div class="alert info" role="note">Test mode: keys made here are test keys (<code>sk_test_…</code>), which never touch real money. Switch to live data to manage live keys.</div>`;
}

export function keysList(page: ListPage<ApiKeyRow>, wasCursor: boolean, f: Forms, notice: Html): ShellPage {
  const now = new Date();
  return {
    section: 'api-keys',
    title: 'API keys',
    actions: buttonForm(BASE, f, `Create a ${modeWord(f.livemode)} key`, { kind: 'primary' }),
    body: html`${notice}${modeNote(f.livemode)}${card(
      null,
      html`<p class="muted intro">Your servers send a secret key with each request to the API (<code>Authorization: Bearer sk_…</code>). A key is shown once, when it is made; here you see its last four characters. Roll a key to replace it (the old one can keep working for a while, so you can deploy the new one), or revoke it to stop it at once: the API refuses it within a few seconds.</p>
${table<ApiKeyRow>(
        [
          { label: 'Key', cell: (k) => html`<span class="mono nowrap">${maskedKey(k)}</span>` },
          { label: 'Status', cell: (k) => statusOf(k) },
          { label: 'Access', cell: (k) => accessOf(k) },
          { label: 'Created', cell: (k) => when(k.created_at) },
          { label: 'Last used', cell: (k) => (k.last_used_at ? when(k.last_used_at) : 'never') },
          { label: 'Expires', cell: (k) => (k.expires_at ? when(k.expires_at) : '—') },
          {
            label: 'Actions',
            cell: (k) => {
              const status = keyStatus(k, now);
              if (status === 'Revoked' || status === 'Expired') return '—';
              return html`<span class="nowrap">${status === 'Active' ? html`<a href="${keyPath(k.id)}?confirm=roll" aria-label="Roll ${maskedKey(k)}">Roll</a> · ` : ''}<a href="${keyPath(k.id)}?confirm=revoke" aria-label="Revoke ${maskedKey(k)}">Revoke</a></span>`;
            },
          },
        ],
        page.rows,
        (k) => keyPath(k.id),
        `No ${modeWord(f.livemode)} keys yet.`,
      )}
${pager(BASE, {}, page, wasCursor)}`,
    )}
${card(
      'Create a restricted key',
      html`<p class="muted">A restricted key can do only what you allow here, per resource; every API route refuses it elsewhere (403). It cannot be widened later: make another key instead.</p>
${buttonForm(BASE, f, 'Create a read-only key', { fields: { restricted: 'read_only' } })}
<form method="post" action="${BASE}">${f.hidden()}<input type="hidden" name="restricted" value="custom">
<div class="table-wrap"><table><thead><tr><th scope="col">Resource</th><th scope="col">Access</th></tr></thead><tbody>${RESOURCE_NAMES.map(
        (r) => html`<tr><td><label for="perm-${r}">${r.replaceAll('_', ' ')}</label></td><td><select id="perm-${r}" name="perm_${r}">${(r === 'api_keys' || r === 'audit_events' || r === 'reports' ? (['none', 'read'] as const) : ACCESS).map(
          (a) => html`<option value="${a}">${a}</option>`,
        )}</select></td></tr>`,
      )}</tbody></table></div>
<button type="submit">Create a restricted key</button></form>`,
    )}`,
  };
}

/** Full, read only, or what the restricted key may write. */
export function accessOf(k: Pick<ApiKeyRow, 'permissions'>): string {
  if (!k.permissions) return 'Full';
  const entries = Object.entries(k.permissions);
  if (entries.every(([, a]) => a === 'read')) return 'Read only';
  const writes = entries.filter(([, a]) => a === 'write').map(([r]) => r.replaceAll('_', ' '));
  const reads = entries.filter(([, a]) => a === 'read').map(([r]) => r.replaceAll('_', ' '));
  return `Restricted: ${[writes.length ? `write ${writes.join(', ')}` : '', reads.length ? `read ${reads.join(', ')}` : ''].filter(Boolean).join('; ') || 'nothing'}`;
}

export interface KeyDetailState {
  confirm: 'roll' | 'revoke' | null;
  /** The roll form as posted, with the problem the API found. */
  roll?: FormState;
}

export function keyDetail(k: ApiKeyRow, f: Forms, notice: Html, st: KeyDetailState): ShellPage {
  const path = keyPath(k.id);
  const status = keyStatus(k);
  const canRoll = status === 'Active';
  const canRevoke = status === 'Active' || status === 'Expiring';
  const roll = st.roll ?? { values: { expires_in: '3600' } };
  const confirm =
    st.confirm === 'roll' && canRoll
      ? html`${confirmPanel({
          heading: `Roll ${maskedKey(k)}?`,
          text: 'A new key is made now and shown once. Choose how long this key keeps working, to give you time to put the new one on your servers. After that it is refused.',
          action: `${path}/roll`,
          forms: f,
          button: 'Roll key',
          back: path,
          extra: select({ name: 'expires_in', label: 'Keep the old key working for', state: roll, options: OVERLAPS }),
        })}`
      : st.confirm === 'revoke' && canRevoke
        ? confirmPanel({
            heading: `Revoke ${maskedKey(k)}?`,
            text: 'The key stops working now: every request made with it is refused within a few seconds. Servers still using it will fail. This cannot be undone.',
            action: `${path}/revoke`,
            forms: f,
            button: 'Revoke key',
            back: path,
          })
        : '';
  return {
    section: 'api-keys',
    title: maskedKey(k),
    crumbs: [['API keys', BASE]],
    actions: html`${canRoll ? html`<a class="btn" href="${path}?confirm=roll">Roll…</a>` : ''}${canRevoke ? html`<a class="btn danger" href="${path}?confirm=revoke">Revoke…</a>` : ''}`,
    body: html`${notice}${formError(roll, canRoll && st.confirm === 'roll' ? ['expires_in'] : [])}${confirm}${card(
      'Details',
      facts([
        ['ID', html`<span class="mono">${k.id}</span>`],
        ['Key', html`<span class="mono">${maskedKey(k)}</span>`],
        ['Mode', k.livemode ? 'Live' : 'Test'],
        ['Status', statusOf(k)],
        ['Access', accessOf(k)],
        ['Created', when(k.created_at)],
        ['Last used', k.last_used_at ? when(k.last_used_at) : 'never'],
        ['Expires', k.expires_at ? when(k.expires_at) : null],
        ['Revoked', k.revoked_at ? when(k.revoked_at) : null],
      ]),
    )}`,
  };
}

/**
 * The one page that shows a secret key: right after it was made (create or roll). A reload or a
 * second submit of the same form goes to the list without it.
 */
export function newKeyPage(k: ApiKeyRow, secret: string, rolled: ApiKeyRow | null): ShellPage {
  const mode = modeWord(k.livemode);
  return {
    section: 'api-keys',
    title: rolled ? 'Key rolled: your new key' : `Your new ${mode} key`,
    crumbs: [['API keys', BASE]],
    body: html`${card(
      null,
      html`<div class="alert warn" role="alert"><strong>Copy this key now and store it somewhere safe</strong> (your server's environment or a secrets manager). It is shown only this once: we keep only a hash of it, so it cannot be shown again. If you lose it, roll it.</div>
${copyable(secret, `the new ${mode} key`, html`data-secret`)}
${rolled
        ? alertBox(
            'info',
            rolled.expires_at && rolled.expires_at.getTime() > Date.now() + 5_000
              ? `The old key ${maskedKey(rolled)} keeps working until ${when(rolled.expires_at)}; then it is refused.`
              : `The old key ${maskedKey(rolled)} has stopped working: the API refuses it within a few seconds.`,
          )
        : ''}
${k.livemode ? html`<p><strong>This is a live key:</strong> it can take real payments and move real money.</p>` : ''}
<p><a class="btn" href="${BASE}">I have stored it: back to API keys</a></p>`,
    )}`,
  };
}
