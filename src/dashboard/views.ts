import { createHash } from 'node:crypto';
import { formatAmount } from '../lib/currency.ts';
import { html, raw, type Html } from '../pages/html.ts';
import { alertBox } from '../pages/layout.ts';
import type { HomeNumbers } from './home.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './password.ts';
import type { SessionRow, UserRow } from './store.ts';

/**
 * The dashboard's look: a header (business name, mode switch, navigation, sign-out) over one
 * wide column; no script at all. The stylesheet is inline and allowed by its hash in the CSP.
 */
export const DASH_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f3f4f7;color:#1a1f36;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:#4b44d6}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}
.skip:focus{left:.5rem}
.test-banner{background:#8a4500;color:#fff;text-align:center;font-weight:700;font-size:.875rem;padding:.375rem 1rem;letter-spacing:.02em}
header.top{background:#fff;border-bottom:1px solid #e6e8ee}
.top-inner{max-width:64rem;margin:0 auto;padding:.75rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem}
.brand{font-weight:700;font-size:1.0625rem;margin-right:auto;overflow-wrap:anywhere}
nav ul{list-style:none;margin:0;padding:0;display:flex;gap:.25rem}
nav a{display:inline-block;padding:.5rem .75rem;border-radius:8px;text-decoration:none;color:#3c4257;font-weight:600}
nav a[aria-current=page]{background:#eef0ff;color:#3d35c8}
nav a:hover{background:#f3f4f7}
form.inline{display:inline;margin:0}
.mode{display:flex;align-items:center;gap:.5rem;font-size:.875rem}
.pill{display:inline-block;font-size:.8125rem;font-weight:700;padding:.125rem .5rem;border-radius:999px}
.pill.test{background:#fff1e0;color:#8a4500}
.pill.live{background:#e9f8f0;color:#0b6b3a}
button,.btn{font:inherit;font-weight:600;font-size:.9375rem;padding:.5rem .875rem;border-radius:8px;border:1px solid #c9ced8;background:#fff;color:#1a1f36;cursor:pointer;min-height:2.5rem}
button:hover{background:#f6f7f9}
button:focus-visible,a:focus-visible,input:focus-visible{outline:3px solid rgba(99,91,255,.45);outline-offset:2px}
button.primary{background:#635bff;border-color:#635bff;color:#fff}
button.primary:hover{background:#5148e8}
main{max-width:64rem;margin:0 auto;padding:1.5rem 1rem 3rem}
main.narrow{max-width:26rem}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}
h2{font-size:1.0625rem;margin:0 0 .75rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(26,31,54,.12);padding:1.25rem;margin:0 0 1rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:1rem;margin:0 0 1rem}
.grid .card{margin:0}
.stat-label{color:#5b6478;font-size:.875rem;font-weight:600;margin:0 0 .25rem}
.stat{font-size:1.5rem;font-weight:700;margin:0;overflow-wrap:anywhere}
.stat-list{list-style:none;margin:0;padding:0}
.muted{color:#5b6478;font-size:.9375rem}
.field{margin:0 0 1rem}
label{display:block;font-weight:600;font-size:.875rem;margin:0 0 .375rem}
.hint{font-weight:400;color:#5b6478;font-size:.8125rem}
input{display:block;width:100%;font:inherit;padding:.65rem .8rem;border:1px solid #8a91a3;border-radius:8px;background:#fff;color:inherit;min-height:2.75rem}
input[aria-invalid=true]{border-color:#cd3d64}
form button.primary.wide{width:100%;padding:.75rem 1rem;font-size:1rem}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;font-size:.9375rem;overflow-wrap:anywhere}
.alert.error{background:#fdecef;color:#8a0b2f;border:1px solid #f5c2cf}
.alert.success{background:#e9f8f0;color:#0b6b3a;border:1px solid #bfe8d0}
.alert.info{background:#eef3ff;color:#1d3b8f;border:1px solid #c9d7ff}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8125rem;overflow-wrap:anywhere}
table{width:100%;border-collapse:collapse;font-size:.9375rem}
th,td{padding:.5rem .5rem .5rem 0;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
th{font-size:.8125rem;color:#5b6478;text-transform:uppercase;letter-spacing:.04em}
.chart svg{display:block;width:100%;height:auto}
.chart .axis{font-size:.8125rem;color:#5b6478;display:flex;justify-content:space-between}
@media (max-width:480px){main{padding:1rem .75rem 2rem}.card{padding:1rem}.stat{font-size:1.25rem}th,td{font-size:.875rem}}
`.trim();

export const DASH_CSS_HASH = `'sha256-${createHash('sha256').update(DASH_CSS).digest('base64')}'`;

export type NavItem = 'home' | 'users';
const NAV: Array<[NavItem, string, string]> = [
  ['home', 'Home', '/dashboard'],
  ['users', 'Users', '/dashboard/users'],
];

function documentOf(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${raw(DASH_CSS)}</style>
</head>
<body>
${body}
</body>
</html>
`.value;
}

/** A page of a signed-in user: the test banner in test mode, the header, then `body`. */
export function shellPage(session: SessionRow, csrf: string, current: NavItem | null, title: string, body: Html): string {
  const name = session.business_name ?? session.account_id;
  const live = session.livemode;
  return documentOf(
    `${title} · ${live ? '' : 'Test · '}Dashboard`,
    html`<a class="skip" href="#main">Skip to content</a>
${live ? '' : html`<div class="test-banner" role="note">TEST MODE: you are viewing test data. Nothing here is real money.</div>`}
<header class="top"><div class="top-inner">
<span class="brand">${name}</span>
<nav aria-label="Dashboard"><ul>${NAV.map(
      ([key, label, href]) => html`<li><a href="${href}"${key === current ? raw(' aria-current="page"') : ''}>${label}</a></li>`,
    )}</ul></nav>
<form class="inline mode" method="post" action="/dashboard/mode">
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="mode" value="${live ? 'test' : 'live'}">
<input type="hidden" name="back" value="${current === 'users' ? '/dashboard/users' : '/dashboard'}">
<span>Viewing <span class="pill ${live ? 'live' : 'test'}" data-mode="${live ? 'live' : 'test'}">${live ? 'Live data' : 'Test data'}</span></span>
<button type="submit">${live ? 'Switch to test data' : 'Switch to live data'}</button>
</form>
<form class="inline" method="post" action="/dashboard/sign-out">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign out</button>
</form>
</div></header>
<main id="main">
<h1>${title}</h1>
${body}
</main>`,
  );
}

/** A page outside the shell (sign-in, set-password, errors). */
export function plainPage(title: string, body: Html): string {
  return documentOf(`${title} · Dashboard`, html`<main id="main" class="narrow"><h1>${title}</h1>${body}</main>`);
}

export const messagePage = (title: string, message: string): string => plainPage(title, html`<div class="card"><p>${message}</p></div>`);

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

const volumeList = (rows: HomeNumbers['today']) =>
  rows.length
    ? html`<ul class="stat-list">${rows.map((r) => html`<li class="stat" data-currency="${r.currency}">${formatAmount(r.amount_cents, r.currency)}</li>`)}</ul>`
    : html`<p class="stat">0</p>`;

/** A bar per day of the 30, scaled to the largest day; each bar names its day and amount. */
export function volumeChart(n: HomeNumbers): Html {
  if (!n.chartCurrency) return html`<p class="muted">No succeeded payments in the last 30 days.</p>`;
  const W = 600;
  const H = 160;
  const gap = 4;
  const bar = (W - gap * 29) / 30;
  const max = Math.max(...n.days.map((d) => d.amount_cents), 1);
  const cur = n.chartCurrency;
  const total = n.days.reduce((a, d) => a + d.amount_cents, 0);
  return html`<div class="chart">
<svg viewBox="0 0 ${W} ${H + 2}" role="img" aria-labelledby="chart-title" focusable="false">
<title id="chart-title">Daily volume in ${cur.toUpperCase()} over the last 30 days, ${formatAmount(total, cur)} in all</title>
<line x1="0" y1="${H + 1}" x2="${W}" y2="${H + 1}" stroke="#c9ced8" stroke-width="1"/>
${n.days.map((d, i) => {
    const h = d.amount_cents ? Math.max(2, Math.round((d.amount_cents / max) * H)) : 0;
    return html`<rect x="${(i * (bar + gap)).toFixed(1)}" y="${H - h}" width="${bar.toFixed(1)}" height="${h}" rx="2" fill="#635bff" data-day="${d.day}" data-amount="${d.amount_cents}"><title>${d.day}: ${formatAmount(d.amount_cents, cur)}</title></rect>`;
  })}
</svg>
<div class="axis" aria-hidden="true"><span>${n.days[0]!.day}</span><span>${n.days.at(-1)!.day}</span></div>
</div>`;
}

export function homeBody(n: HomeNumbers): Html {
  return html`<div class="grid">
<section class="card" aria-labelledby="h-today" data-stat="today"><h2 id="h-today" class="stat-label">Volume today (UTC)</h2>${volumeList(n.today)}</section>
<section class="card" aria-labelledby="h-30" data-stat="last30"><h2 id="h-30" class="stat-label">Volume, last 30 days</h2>${volumeList(n.last30)}</section>
<section class="card" aria-labelledby="h-ok" data-stat="succeeded"><h2 id="h-ok" class="stat-label">Succeeded payments, 30 days</h2><p class="stat">${n.succeeded30}</p></section>
<section class="card" aria-labelledby="h-failed" data-stat="failed"><h2 id="h-failed" class="stat-label">Failed payments, 30 days</h2><p class="stat">${n.failed30}</p></section>
</div>
<section class="card" aria-labelledby="h-chart"><h2 id="h-chart">Daily volume${n.chartCurrency ? ` (${n.chartCurrency.toUpperCase()})` : ''}</h2>${volumeChart(n)}</section>`;
}

export interface UsersView {
  users: UserRow[];
  csrf: string;
  email?: string;
  error?: string | null;
  /** The one-time link just made, shown once. */
  link?: { email: string; url: string } | null;
}

export function usersBody(v: UsersView): Html {
  const when = (d: Date | null) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never');
  return html`<section class="card" aria-labelledby="h-users"><h2 id="h-users">People who can sign in to this account</h2>
<table><thead><tr><th scope="col">Email</th><th scope="col">Password</th><th scope="col">Last sign-in</th></tr></thead>
<tbody>${v.users.map((u) => html`<tr><td>${u.email}</td><td>${u.password_hash ? 'set' : 'not yet chosen'}</td><td>${when(u.last_sign_in_at)}</td></tr>`)}</tbody></table>
</section>
<section class="card" aria-labelledby="h-invite"><h2 id="h-invite">Invite someone</h2>
${v.link
    ? html`<div class="alert success" role="status"><p>Send this one-time link to <strong>${v.link.email}</strong> to choose a password. It is shown only now and works once.</p>
<p class="mono" data-invite-link>${v.link.url}</p></div>`
    : ''}
${alertBox('error', v.error)}
<form method="post" action="/dashboard/users" novalidate>
<input type="hidden" name="_csrf" value="${v.csrf}">
<div class="field"><label for="invite-email">Email</label>
<input id="invite-email" name="email" type="email" autocomplete="off" required maxlength="254" value="${v.email ?? ''}"${v.error ? raw(' aria-invalid="true"') : ''}></div>
<button class="primary" type="submit">Create a one-time link</button>
</form></section>`;
}
