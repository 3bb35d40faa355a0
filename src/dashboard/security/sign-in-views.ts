import { html, raw, type Html } from '../../pages/html.ts';
import { alertBox } from '../../pages/layout.ts';
import { plainPage } from '../layout.ts';
import { passkeyRegisterForm, passkeyScripts, recoveryCodesFragment, totpConfirmForm, totpSetupFragment, type PasskeyScripts, type TotpSetup } from './views.ts';

/** The pages between the password and the dashboard (sign-in.ts): outside the shell, no session yet. */

const STEP = '/dashboard/sign-in';
const hiddenCsrf = (csrf: string): Html => html`<input type="hidden" name="_csrf" value="${csrf}">`;
const startOver = html`<p class="muted"><a href="${STEP}">Sign in as someone else</a></p>`;

export interface TwoFactorView {
  csrf: string;
  email: string;
  totp: boolean;
  /** Options for the browser's passkey prompt; null without a passkey. */
  passkeyOptions: unknown;
  error?: string | null;
  scripts: PasskeyScripts;
}

export function twoFactorPage(v: TwoFactorView): string {
  return plainPage(
    'Two-factor sign-in',
    html`<div class="card">
<p class="muted intro">Signing in as <strong>${v.email}</strong>.</p>
${alertBox('error', v.error)}
${v.passkeyOptions
  ? html`<form method="post" action="${STEP}/two-factor/passkey" data-passkey-sign-in data-options="${JSON.stringify(v.passkeyOptions)}" hidden>${hiddenCsrf(v.csrf)}
<input type="hidden" name="credential" value="">
<button class="primary wide" type="submit">Use your passkey</button>
<p class="field-error" role="status" data-passkey-status></p>
</form>${v.totp ? '' : html`<p class="muted" data-passkey-unsupported>This browser cannot use passkeys: sign in from one that can.</p>`}`
  : ''}
${v.totp
  ? html`<form method="post" action="${STEP}/two-factor" novalidate>${hiddenCsrf(v.csrf)}
<div class="field"><label for="code">Code from your authenticator app</label>
<p class="hint" id="code-hint">Six digits, or one of your recovery codes if you lost your phone.</p>
<input id="code" name="code" autocomplete="one-time-code" maxlength="20" required autofocus aria-describedby="code-hint"${v.error ? raw(' aria-invalid="true"') : ''}></div>
<button class="${v.passkeyOptions ? '' : 'primary wide'}" type="submit">Verify</button>
</form>`
  : ''}
${startOver}</div>${v.passkeyOptions ? passkeyScripts(v.scripts) : ''}`,
  );
}

export interface EnrolView {
  csrf: string;
  email: string;
  registerOptions: unknown;
  scripts: PasskeyScripts;
  /** A TOTP enrolment just started (its key shown once), or waiting for its first code. */
  totpSetup?: TotpSetup | null;
  totpPending?: boolean;
  error?: string | null;
  passkeyError?: string | null;
}

export function enrolPage(v: EnrolView): string {
  const totp = v.totpSetup || v.totpPending
    ? html`${v.totpSetup ? totpSetupFragment(v.totpSetup) : html`<p>Enter the code your app shows, or start again for a new key.</p>`}
${totpConfirmForm(`${STEP}/enrol/totp/confirm`, hiddenCsrf(v.csrf), v.error)}
<form class="again" method="post" action="${STEP}/enrol/totp">${hiddenCsrf(v.csrf)}<button type="submit">Start again with a new key</button></form>`
    : html`<p>An app on your phone that shows a new six-digit code every 30 seconds.</p>
<form method="post" action="${STEP}/enrol/totp">${hiddenCsrf(v.csrf)}<button class="primary" type="submit">Set up an authenticator app</button></form>`;
  return plainPage(
    'Set up two-factor sign-in',
    html`<div class="alert info" role="status"><p>Your account requires two-factor sign-in. Set up a second factor for <strong>${v.email}</strong> to continue.</p></div>
<section class="card" data-section="totp"><h2>Authenticator app</h2>${totp}</section>
<section class="card" data-section="passkeys"><h2>Or a passkey</h2>
${passkeyRegisterForm(`${STEP}/enrol/passkey`, hiddenCsrf(v.csrf), v.registerOptions, v.passkeyError)}</section>
${startOver}${passkeyScripts(v.scripts)}`,
  );
}

export function enrolDonePage(codes: string[]): string {
  return plainPage(
    'Two-factor sign-in is on',
    html`<div class="card">${recoveryCodesFragment(codes)}
<p><a class="btn primary" href="/dashboard">Continue to the dashboard</a></p></div>`,
  );
}
