import { html, raw } from '../pages/html.ts';
import { alertBox } from '../pages/layout.ts';
import { plainPage } from './layout.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './password.ts';

export interface SignInView {
  csrf: string;
  email?: string;
  error?: string | null;
  notice?: string | null;
}

export function signInPage(v: SignInView): string {
  return plainPage(
    'Sign in to the dashboard',
    html`<div class="card">
${alertBox('error', v.error)}${alertBox('success', v.notice)}
<form method="post" action="/dashboard/sign-in" novalidate>
<input type="hidden" name="_csrf" value="${v.csrf}">
<div class="field"><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${v.email ?? ''}" autofocus></div>
<div class="field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_MAX}"></div>
<button class="primary wide" type="submit">Sign in</button>
</form></div>`,
  );
}

export function setPasswordPage(v: { csrf: string; token: string; email: string; error?: string | null }): string {
  return plainPage(
    'Choose your password',
    html`<div class="card">
<p class="muted">For <strong>${v.email}</strong>. This link works once.</p>
${alertBox('error', v.error)}
<form method="post" action="/dashboard/set-password" novalidate>
<input type="hidden" name="_csrf" value="${v.csrf}">
<input type="hidden" name="token" value="${v.token}">
<input type="text" name="username" autocomplete="username" value="${v.email}" hidden>
<div class="field"><label for="password">New password <span class="hint">(${PASSWORD_MIN} to ${PASSWORD_MAX} characters)</span></label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}"${v.error ? raw(' aria-invalid="true"') : ''}></div>
<div class="field"><label for="confirm">Repeat the password</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength="${PASSWORD_MAX}"></div>
<button class="primary wide" type="submit">Set password</button>
</form></div>`,
  );
}
