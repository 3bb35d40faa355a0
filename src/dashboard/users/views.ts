import { html, raw, type Html } from '../../pages/html.ts';
import type { UserRow } from '../store.ts';
import { alertBox, card, when, type Forms } from '../widgets.ts';

export interface UsersView {
  users: UserRow[];
  email?: string;
  error?: string | null;
  /** How long a one-time link works. */
  linkHours?: number;
  /** The one-time link just made, shown once. */
  link?: { email: string; url: string } | null;
}

export function usersBody(v: UsersView, f: Forms): Html {
  return html`<section class="card" aria-labelledby="h-users"><h2 id="h-users">People who can sign in to this account</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Email</th><th scope="col">Password</th><th scope="col">Last sign-in</th></tr></thead>
<tbody>${v.users.map((u) => html`<tr><td>${u.email}</td><td>${u.password_hash ? 'set' : 'not yet chosen'}</td><td>${u.last_sign_in_at ? when(u.last_sign_in_at) : 'never'}</td></tr>`)}</tbody></table></div>
</section>
${card(
    'Invite someone',
    html`${v.link
      ? html`<div class="alert success" role="status"><p>An email with a one-time link to choose a password is on its way to <strong>${v.link.email}</strong>. If it does not arrive, send them this link another way: it is shown only now and works once.</p>
<p class="mono" data-invite-link>${v.link.url}</p></div>`
      : ''}
${alertBox('error', v.error)}
<form method="post" action="/dashboard/users" novalidate>
${f.hidden()}
<div class="field"><label for="invite-email">Email</label>
<p class="hint" id="invite-email-hint">They get an email with a one-time link to choose a password (it works for ${v.linkHours ?? 24} hours).</p>
<input id="invite-email" name="email" type="email" autocomplete="off" required maxlength="254" aria-describedby="invite-email-hint" value="${v.email ?? ''}"${v.error ? raw(' aria-invalid="true"') : ''}></div>
<button class="primary" type="submit">Create a one-time link and email it</button>
</form>`,
  )}`;
}
