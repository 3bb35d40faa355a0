import { html, raw, type Html } from '../../pages/html.ts';
import { ROLES, type Role } from '../../team/roles.ts';
import type { MemberRow, RefundLimits } from '../../team/store.ts';
import { alertBox, card, confirmPanel, input, money, select, when, type FormState, type Forms } from '../widgets.ts';

export const TEAM_PATH = '/dashboard/team';

export const ROLE_LABELS: Record<Role, string> = {
  owner: 'Owner',
  administrator: 'Administrator',
  developer: 'Developer',
  analyst: 'Analyst',
  support: 'Support',
};

const ROLE_HINTS: Record<Role, string> = {
  owner: 'everything, including the other owners and the support refund limit',
  administrator: 'everything except owners and the refund limit',
  developer: 'API keys, webhooks, payments and customers; no refunds or settings',
  analyst: 'reads everything, changes nothing',
  support: 'customers, payments and refunds up to the limit; no keys or endpoints',
};

export interface TeamView {
  me: { userId: string; role: Role };
  members: MemberRow[];
  limits: RefundLimits;
  linkHours: number;
  notice?: Html;
  /** The invitation form coming back with its problem. */
  invite?: FormState;
  /** The refund limit form coming back with its problem. */
  limit?: FormState;
  /** A problem with a change of role or a removal. */
  problem?: string | null;
  /** The member whose removal the page asks to confirm. */
  confirmRemove?: MemberRow | null;
}

/** The roles an actor may give: only an owner makes owners. */
const assignable = (me: Role) => ROLES.filter((r) => r !== 'owner' || me === 'owner').map((r) => ({ value: r, label: `${ROLE_LABELS[r]}: ${ROLE_HINTS[r]}` }));

function memberRow(m: MemberRow, v: TeamView, f: Forms): Html {
  const locked = m.role === 'owner' && v.me.role !== 'owner';
  const you = m.id === v.me.userId;
  return html`<tr data-member="${m.email}"><td>${m.email}${you ? html` <span class="muted">(you)</span>` : ''}</td>
<td>${locked
    ? ROLE_LABELS[m.role]
    : html`<form class="inline" method="post" action="${TEAM_PATH}/users/${m.id}/role">${f.hidden()}<select id="role-${m.id}" name="role" aria-label="Role of ${m.email}">${assignable(v.me.role).map(
        (o) => html`<option value="${o.value}"${o.value === m.role ? raw(' selected') : ''}>${ROLE_LABELS[o.value]}</option>`,
      )}</select> <button type="submit" class="small" aria-label="Change the role of ${m.email}">Change</button></form>`}</td>
<td>${m.has_password ? 'Signed up' : 'Invitation pending'}</td><td>${m.last_sign_in_at ? when(m.last_sign_in_at) : 'never'}</td>
<td>${locked ? '' : html`<a href="${TEAM_PATH}?confirm=remove&amp;user=${m.id}" aria-label="Remove ${m.email}">Remove…</a>`}</td></tr>`;
}

export function teamBody(v: TeamView, f: Forms): Html {
  const invite = v.invite ?? { values: { role: 'developer' } };
  const limit = v.limit ?? { values: {} };
  const limits = Object.entries(v.limits).sort(([a], [b]) => a.localeCompare(b));
  return html`${v.notice ?? ''}${alertBox('error', v.problem ?? null)}
${v.confirmRemove
    ? confirmPanel({
        heading: `Remove ${v.confirmRemove.email}?`,
        text: v.confirmRemove.has_password
          ? 'They are signed out at once and can no longer sign in to this account. Invite them again to give them access back.'
          : 'Their invitation stops working at once.',
        action: `${TEAM_PATH}/users/${v.confirmRemove.id}/remove`,
        forms: f,
        button: 'Remove',
        back: TEAM_PATH,
      })
    : ''}
<section class="card" aria-labelledby="h-members"><h2 id="h-members">People who can sign in to this account</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Last sign-in</th><th scope="col">Access</th></tr></thead>
<tbody>${v.members.map((m) => memberRow(m, v, f))}</tbody></table></div>
<p class="hint">An account always keeps at least one owner. Only an owner changes or removes an owner.</p>
</section>
${card(
    'Invite someone',
    html`${alertBox('error', invite.error?.message ?? null)}
<form method="post" action="${TEAM_PATH}/invitations" novalidate>
${f.hidden()}
${input({ name: 'email', label: 'Email', type: 'email', state: invite, required: true, hint: `They get an email with a one-time link to choose a password (it works for ${v.linkHours} hours). The link is sent only to them.`, attrs: raw('autocomplete="off" maxlength="254"') })}
${select({ name: 'role', label: 'Role', state: invite, options: assignable(v.me.role) })}
<button class="primary" type="submit">Send the invitation</button>
</form>`,
  )}
${card(
    "Support's refund limit",
    html`<p>A user with the Support role may refund at most this much at once, per currency. In a currency without a limit, Support cannot refund.</p>
${limits.length
      ? html`<ul data-refund-limits>${limits.map(([c, amount]) => html`<li>${c.toUpperCase()}: ${money(amount, c)}</li>`)}</ul>`
      : html`<p class="muted" data-refund-limits>No limit is set: Support cannot refund.</p>`}
${v.me.role === 'owner'
      ? html`${alertBox('error', limit.error?.message ?? null)}<form method="post" action="${TEAM_PATH}/refund-limits" novalidate>
${f.hidden()}
${input({ name: 'currency', label: 'Currency', state: limit, hint: 'Three letters, such as usd.', attrs: raw('maxlength="3" autocomplete="off"') })}
${input({ name: 'amount', label: 'Largest refund', state: limit, hint: 'In the currency, such as 50.00. Empty removes the limit of that currency.', attrs: raw('inputmode="decimal" autocomplete="off"') })}
<button type="submit">Save the limit</button>
</form>`
      : html`<p class="hint">Only an owner changes it.</p>`}`,
  )}`;
}
