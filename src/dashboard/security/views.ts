import { html, raw, type Html } from '../../pages/html.ts';
import { alertBox, badge, card, copyable, when, type Forms } from '../widgets.ts';
import type { FactorsRow, PasskeyRow } from './store.ts';
import { formatRecoveryCode } from './totp.ts';

/** The page's own scripts: @simplewebauthn/browser, then ours (passkeys.js), both served by the dashboard. */
export interface PasskeyScripts {
  library: string;
  passkeys: string;
}

export const passkeyScripts = (p: PasskeyScripts): Html => html`<script src="${p.library}" defer></script><script src="${p.passkeys}" defer></script>`;

/** A TOTP enrolment just started: the key shown once, as a QR code (drawn here, no outside asset), text and URI; then the first code. */
export interface TotpSetup {
  secret: string;
  uri: string;
  /** The QR code of the URI, an SVG made on the server. */
  qrSvg: string;
}

export function totpSetupFragment(v: TotpSetup): Html {
  const grouped = v.secret.replace(/(.{4})/g, '$1 ').trim();
  return html`<div class="alert info" role="status"><p><strong>This key is shown only now.</strong> Add it to your authenticator app, then enter the code it shows.</p></div>
<ol class="steps">
<li><p>Scan this QR code with your authenticator app (Google Authenticator, 1Password, Authy, …):</p>
<div class="qr" role="img" aria-label="QR code of the setup key">${raw(v.qrSvg)}</div></li>
<li><p>Or type the key into the app:</p>${copyable(grouped, 'setup key', html` data-totp-secret`)}
<details class="disclose"><summary>Show the setup link</summary><p class="mono" data-totp-uri>${v.uri}</p></details></li>
</ol>`;
}

/** The form for the first code of an enrolment, or (error) again after a wrong one. */
export function totpConfirmForm(action: string, hidden: Html, error?: string | null): Html {
  return html`<form method="post" action="${action}" novalidate>${hidden}
<div class="field"><label for="totp-code">Code from your app</label>
<p class="hint" id="totp-code-hint">Six digits.</p>
<input id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="7" required aria-describedby="totp-code-hint"${error ? raw(' aria-invalid="true"') : ''}>
${error ? html`<p class="field-error" role="alert">${error}</p>` : ''}</div>
<button class="primary" type="submit">Turn on two-factor sign-in</button>
</form>`;
}

export function recoveryCodesFragment(codes: string[]): Html {
  return html`<div class="alert success" role="status"><p><strong>Save these recovery codes now: they are shown only once.</strong>
Each one signs you in once if you lose your phone. Keep them somewhere safe, such as a password manager.</p></div>
<ul class="recovery-codes" data-recovery-codes>${codes.map((c) => html`<li><code>${formatRecoveryCode(c)}</code></li>`)}</ul>
<p><button type="button" class="small" data-copy="${codes.map(formatRecoveryCode).join('\n')}" aria-label="Copy the recovery codes" hidden>Copy</button><span class="sr-only" role="status" aria-live="polite"></span></p>`;
}

/** A form that creates a passkey: the script asks the browser, fills `credential` and submits. Hidden without WebAuthn. */
export function passkeyRegisterForm(action: string, hidden: Html, options: unknown, error?: string | null): Html {
  return html`<form method="post" action="${action}" data-passkey-register data-options="${JSON.stringify(options)}" hidden novalidate>${hidden}
<input type="hidden" name="credential" value="">
<div class="field"><label for="passkey-name">Name of the passkey</label>
<p class="hint" id="passkey-name-hint">So that you know which one it is, such as “Work laptop”.</p>
<input id="passkey-name" name="name" maxlength="60" required autocomplete="off" aria-describedby="passkey-name-hint" value="Passkey"${error ? raw(' aria-invalid="true"') : ''}></div>
${error ? html`<p class="field-error" role="alert">${error}</p>` : ''}
<button class="primary" type="submit">Add a passkey</button>
<p class="field-error" role="status" data-passkey-status></p>
</form>
<p class="muted" data-passkey-unsupported>This browser cannot create passkeys.</p>`;
}

export interface SecurityView {
  factors: FactorsRow;
  passkeys: PasskeyRow[];
  /** The user may require two-factor for every user of the account (team.manage). */
  canRequire: boolean;
  notice?: Html;
  totpSetup?: TotpSetup | null;
  recoveryCodes?: string[] | null;
  errors?: Partial<Record<'totp_confirm' | 'totp_off' | 'passkey' | 'required', string>>;
  registerOptions: unknown;
}

const ACTION = '/dashboard/security';

function totpCard(v: SecurityView, f: Forms): Html {
  const fa = v.factors;
  if (v.recoveryCodes) return card('Authenticator app', recoveryCodesFragment(v.recoveryCodes), html` data-section="totp"`);
  if (fa.totp_enabled) {
    return card(
      'Authenticator app',
      html`<p>${badge('On', 'good')} Sign-in asks for a code from your app after your password.</p>
<p class="muted">${fa.recovery_codes_left} of 10 recovery codes left.</p>
<form method="post" action="${ACTION}/recovery-codes">${f.hidden()}<button type="submit">Make new recovery codes</button></form>
<details class="disclose"${v.errors?.totp_off ? raw(' open') : ''}><summary>Turn the authenticator app off</summary>
<form method="post" action="${ACTION}/totp/off" novalidate>${f.hidden()}
<div class="field"><label for="totp-off-code">A code from your app, or a recovery code</label>
<input id="totp-off-code" name="code" autocomplete="one-time-code" maxlength="20" required${v.errors?.totp_off ? raw(' aria-invalid="true"') : ''}>
${v.errors?.totp_off ? html`<p class="field-error" role="alert">${v.errors.totp_off}</p>` : ''}</div>
<button class="danger" type="submit">Turn off</button></form></details>`,
      html` data-section="totp"`,
    );
  }
  if (v.totpSetup || fa.totp_pending) {
    return card(
      'Authenticator app',
      html`${v.totpSetup ? totpSetupFragment(v.totpSetup) : html`<p>You started setting up an authenticator app. Enter the code it shows, or start again for a new key.</p>`}
${totpConfirmForm(`${ACTION}/totp/confirm`, f.hidden(), v.errors?.totp_confirm)}
<form class="again" method="post" action="${ACTION}/totp">${f.hidden()}<button type="submit">Start again with a new key</button></form>`,
      html` data-section="totp"`,
    );
  }
  return card(
    'Authenticator app',
    html`<p>${badge('Off')} Use an app on your phone that shows a new six-digit code every 30 seconds.</p>
<form method="post" action="${ACTION}/totp">${f.hidden()}<button class="primary" type="submit">Set up an authenticator app</button></form>`,
    html` data-section="totp"`,
  );
}

function passkeysCard(v: SecurityView, f: Forms): Html {
  return card(
    'Passkeys',
    html`<p class="muted">A passkey on this device or a security key, asked after your password instead of a code.</p>
${v.passkeys.length
  ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${v.passkeys.map(
      (p) => html`<tr data-passkey="${p.id}"><td>${p.name}</td><td>${when(p.created_at)}</td><td>${p.last_used_at ? when(p.last_used_at) : 'never'}</td>
<td><form class="inline" method="post" action="${ACTION}/passkeys/remove">${f.hidden()}<input type="hidden" name="id" value="${p.id}"><button class="danger small" type="submit" aria-label="Remove the passkey ${p.name}">Remove</button></form></td></tr>`,
    )}</tbody></table></div>`
  : html`<p>${badge('None')} No passkey yet.</p>`}
${passkeyRegisterForm(`${ACTION}/passkeys`, f.hidden(), v.registerOptions, v.errors?.passkey)}`,
    html` data-section="passkeys"`,
  );
}

function requirementCard(v: SecurityView, f: Forms): Html {
  const on = v.factors.require_two_factor;
  if (!v.canRequire) {
    return on ? card('Required for everyone', html`<p>${badge('On', 'good')} Your account requires two-factor sign-in for every user.</p>`) : html``;
  }
  return card(
    'Required for everyone',
    html`<p>${on ? badge('On', 'good') : badge('Off')} ${on
      ? 'Every user of this account signs in with a second factor; someone without one is asked to set one up right after their password.'
      : 'When on, every user of this account must sign in with a second factor. Those without one are signed out and asked to set one up at their next sign-in.'}</p>
${alertBox('error', v.errors?.required)}
<form method="post" action="${ACTION}/required">${f.hidden()}<input type="hidden" name="required" value="${on ? 'false' : 'true'}">
<button type="submit"${on ? raw(' class="danger"') : raw(' class="primary"')}>${on ? 'Stop requiring two-factor' : 'Require two-factor for every user'}</button></form>`,
    html` data-section="required"`,
  );
}

export function securityBody(v: SecurityView, f: Forms, scripts: PasskeyScripts): Html {
  const fa = v.factors;
  const on = fa.totp_enabled || fa.passkeys > 0;
  return html`${v.notice ?? ''}
<p class="intro">${on ? 'Two-factor sign-in is on for you: after your password, sign-in asks for your authenticator app or a passkey.' : 'Two-factor sign-in is off for you: your password alone signs you in. Add an authenticator app or a passkey.'}</p>
${totpCard(v, f)}${passkeysCard(v, f)}${requirementCard(v, f)}${passkeyScripts(scripts)}`;
}
