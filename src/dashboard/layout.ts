import { createHash } from 'node:crypto';
import { html, raw, type Html } from '../pages/html.ts';
import { FAVICON_HREF } from '../pages/layout.ts';
import { can, type Permission } from '../team/roles.ts';
import type { SessionRow } from './store.ts';

/**
 * The dashboard's look: a top bar (business name, mode switch, sign-out), the sections in a side
 * column on a wide screen and in a scrolling row on a phone, then one wide column. The stylesheet
 * is inline and allowed by its hash in the CSP; the one script (copy buttons) is a file of our own.
 */
export const DASH_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f3f4f7;color:#1a1f36;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:#4b44d6}
[hidden]{display:none!important}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}
.skip:focus{left:.5rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}
.test-banner{background:#8a4500;color:#fff;text-align:center;font-weight:700;font-size:.875rem;padding:.375rem 1rem;letter-spacing:.02em}
header.top{background:#fff;border-bottom:1px solid #e6e8ee}
.top-inner{max-width:80rem;margin:0 auto;padding:.625rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem}
.brand{font-weight:700;font-size:1.0625rem;margin-right:auto;overflow-wrap:anywhere}
form.inline{display:inline;margin:0}
select{max-width:100%}
.mode{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;font-size:.875rem}
.pill{display:inline-block;font-size:.8125rem;font-weight:700;padding:.125rem .5rem;border-radius:999px;white-space:nowrap}
.pill.test{background:#fff1e0;color:#8a4500}
.pill.live{background:#e9f8f0;color:#0b6b3a}
.frame{max-width:80rem;margin:0 auto;display:flex;gap:1.5rem;padding:0 1rem}
nav.sections{flex:0 0 12rem;padding:1.25rem 0}
nav.sections ul{list-style:none;margin:0 0 1rem;padding:0}
nav.sections .group{font-size:.75rem;font-weight:700;text-transform:uppercase;letter-spacing:.06em;color:#5b6478;margin:.75rem .75rem .25rem}
nav.sections a{display:block;padding:.4rem .75rem;border-radius:8px;text-decoration:none;color:#3c4257;font-weight:600}
nav.sections a[aria-current=page]{background:#e6e7ff;color:#3d35c8}
nav.sections a:hover{background:#e9ebf0}
main{flex:1;min-width:0;padding:1.25rem 0 3rem}
main.narrow{max-width:26rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.crumbs{font-size:.875rem;margin:0 0 .25rem;color:#5b6478}
.title-row{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;margin:0 0 1rem}
.title-row h1{margin:0;overflow-wrap:anywhere}
.title-row .actions{margin-left:auto;display:flex;flex-wrap:wrap;gap:.5rem}
button,.btn{display:inline-flex;align-items:center;justify-content:center;font:inherit;font-weight:600;font-size:.9375rem;padding:.45rem .875rem;border-radius:8px;border:1px solid #c9ced8;background:#fff;color:#1a1f36;cursor:pointer;min-height:2.5rem;text-decoration:none;white-space:nowrap}
button:hover,.btn:hover{background:#f6f7f9}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid rgba(99,91,255,.55);outline-offset:2px}
button.primary,.btn.primary{background:#5046e5;border-color:#5046e5;color:#fff}
button.primary:hover,.btn.primary:hover{background:#4338ca}
button.danger,.btn.danger{background:#fff;border-color:#d1869b;color:#a3082f}
button.danger:hover,.btn.danger:hover{background:#fdecef}
button.small,.btn.small{min-height:2rem;padding:.25rem .625rem;font-size:.875rem}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}
h2{font-size:1.0625rem;margin:0 0 .75rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(26,31,54,.12);padding:1.25rem;margin:0 0 1rem;min-width:0}
.card>h2:first-child{display:flex;align-items:center;gap:.5rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:1rem;margin:0 0 1rem}
.grid .card{margin:0}
.stat-label{color:#5b6478;font-size:.875rem;font-weight:600;margin:0 0 .25rem}
.stat{font-size:1.5rem;font-weight:700;margin:0;overflow-wrap:anywhere}
.stat-list{list-style:none;margin:0;padding:0}
.muted{color:#5b6478;font-size:.9375rem}
.field{margin:0 0 1rem}
.fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:0 1rem}
label,.label{display:block;font-weight:600;font-size:.875rem;margin:0 0 .375rem}
.hint{font-weight:400;color:#5b6478;font-size:.8125rem}
p.hint{margin:-.125rem 0 .375rem}
input,select,textarea{display:block;width:100%;font:inherit;padding:.55rem .75rem;border:1px solid #8a91a3;border-radius:8px;background:#fff;color:inherit;min-height:2.625rem}
textarea{min-height:5rem;resize:vertical}
input[type=checkbox],input[type=radio]{display:inline-block;width:1.125rem;height:1.125rem;min-height:0;margin:0 .5rem 0 0;vertical-align:-.2rem;accent-color:#5046e5}
.check{display:flex;align-items:flex-start;font-weight:400;font-size:.9375rem;margin:0 0 .5rem}
.check input{flex:none;margin-top:.2rem}
fieldset{border:1px solid #e6e8ee;border-radius:8px;padding:.75rem 1rem .25rem;margin:0 0 1rem;min-width:0}
legend{font-weight:600;font-size:.875rem;padding:0 .25rem}
.checks{columns:16rem auto;column-gap:1rem}
[aria-invalid=true]{border-color:#cd3d64}
.field-error{color:#a3082f;font-size:.875rem;margin:.375rem 0 0}
form button.primary.wide{width:100%;padding:.75rem 1rem;font-size:1rem}
.form-actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;font-size:.9375rem;overflow-wrap:anywhere}
.alert.error{background:#fdecef;color:#8a0b2f;border:1px solid #f5c2cf}
.alert.success{background:#e9f8f0;color:#0b6b3a;border:1px solid #bfe8d0}
.alert.info{background:#eef3ff;color:#1d3b8f;border:1px solid #c9d7ff}
.alert.warn{background:#fff6e5;color:#6b3700;border:1px solid #f3d19c}
.alert>:first-child{margin-top:0}.alert>:last-child{margin-bottom:0}
.pre{white-space:pre-wrap}
.nowrap{white-space:nowrap}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8125rem;overflow-wrap:anywhere}
pre{background:#f6f7f9;border:1px solid #e6e8ee;border-radius:8px;padding:.75rem;overflow:auto;max-height:32rem;margin:0;font-size:.8125rem;line-height:1.45}
.secret{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;margin:.5rem 0}
.secret code{background:#fff;border:1px solid #c9ced8;border-radius:6px;padding:.375rem .5rem;font-size:.875rem}
.table-wrap{overflow-x:auto;margin:0 -.25rem}
table{width:100%;border-collapse:collapse;font-size:.9375rem}
th,td{padding:.55rem .5rem;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
th{font-size:.75rem;color:#5b6478;text-transform:uppercase;letter-spacing:.04em;white-space:nowrap}
td.num,th.num{text-align:right;white-space:nowrap}
tbody tr:hover{background:#fafbfc}
.empty{padding:1.5rem 0;text-align:center;color:#5b6478}
.pager{display:flex;justify-content:space-between;align-items:center;gap:.5rem;margin-top:.75rem}
.filters{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.5rem 1rem;margin:0 0 1rem}
.filters .field{margin:0;min-width:10rem;flex:0 1 14rem}
.badge{display:inline-block;font-size:.75rem;font-weight:700;padding:.125rem .5rem;border-radius:999px;background:#eceef2;color:#3c4257;white-space:nowrap;letter-spacing:.02em}
.badge.good{background:#e3f6ea;color:#0b6b3a}
.badge.bad{background:#fde7ec;color:#a3082f}
.badge.warn{background:#fff1e0;color:#8a4500}
.badge.info{background:#e9edff;color:#3d35c8}
dl.facts{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.5rem 1.25rem;margin:0;font-size:.9375rem}
dl.facts dt{color:#5b6478}
dl.facts dd{margin:0;overflow-wrap:anywhere;min-width:0}
.columns{display:grid;grid-template-columns:repeat(auto-fit,minmax(20rem,1fr));gap:0 1rem}
details.disclose{margin:0 0 1rem}
details.disclose>summary{cursor:pointer;font-weight:600;color:#4b44d6;padding:.25rem 0}
.confirm{border:2px solid #d1869b}
.bars{list-style:none;margin:0;padding:0}
.bars li{display:grid;grid-template-columns:7rem 1fr auto;align-items:center;gap:.75rem;margin:0 0 .5rem;font-size:.9375rem}
.bars meter{width:100%;height:1rem}
.qr{display:block;width:12rem;max-width:100%;height:auto;background:#fff;border:1px solid #e6e8ee;border-radius:8px;padding:.5rem}
.chart svg{display:block;width:100%;height:auto}
.chart .axis{font-size:.8125rem;color:#5b6478;display:flex;justify-content:space-between;gap:1rem}
.chart{margin:0 0 1rem}
.report-currency>h2{font-size:1.25rem;margin:1.5rem 0 .75rem}
.report-currency .grid{grid-template-columns:repeat(auto-fit,minmax(9rem,1fr))}
.chart-heading{font-size:.9375rem;margin:1rem 0 .25rem;color:#3c4257}
.report-currency h3.stat-label{font-size:.875rem}
/* payments */
.pay-badges{display:inline-flex;flex-wrap:wrap;gap:.25rem}
.refund-form>h3,.dispute>h3{font-size:1rem;margin:1.25rem 0 .75rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem}
.dispute h4{font-size:.9375rem;margin:1rem 0 .5rem}
.refund-form{border-top:1px solid #e6e8ee;margin-top:1rem}
.refund-form .fields{grid-template-columns:repeat(auto-fit,minmax(12rem,1fr))}
.dispute+.dispute{border-top:1px solid #e6e8ee;margin-top:1.25rem}
.dispute>h3:first-child{margin-top:0}
.dispute .alert.info{margin:1rem 0}
.evidence textarea{min-height:4.5rem}
/* checkout */
/* payment-links */
.totals{display:grid;grid-template-columns:repeat(auto-fit,minmax(8rem,1fr));gap:1rem;margin:0 0 .75rem}
.totals .stat-label,.totals .stat{margin:0}
.bars-h{font-size:.9375rem;margin:1.25rem 0 .5rem}
table.analytics tbody th,table.analytics tfoot th{text-transform:none;letter-spacing:0;font-size:.9375rem;color:inherit}
table.analytics tfoot th,table.analytics tfoot td{font-weight:700;border-bottom:0}
/* invoices */
fieldset.line-row{display:grid;grid-template-columns:minmax(0,1fr) 7rem 10rem;gap:0 .75rem;padding:.5rem .75rem 0}
fieldset.line-row .field{margin-bottom:.75rem}
#minimum_payment_cents{max-width:16rem}
@media (max-width:480px){fieldset.line-row{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}fieldset.line-row .field:first-of-type{grid-column:1/-1}}
/* events */
.delivery{border-top:1px solid #e6e8ee;padding:1rem 0 .5rem}.delivery:first-of-type{border-top:0;padding-top:0}
.delivery h3{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;font-size:1rem;margin:0 0 .75rem;overflow-wrap:anywhere;min-width:0}
.delivery dl.facts{margin:0 0 .75rem}
code.excerpt{display:block;white-space:pre-wrap;max-width:24rem;max-height:8rem;overflow:auto;background:#f6f7f9;border:1px solid #e6e8ee;border-radius:6px;padding:.25rem .5rem}
.resend{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:1rem 1.5rem;align-items:end}
.resend form{margin:0;min-width:0}.resend select{max-width:100%}
.event-type{overflow-wrap:normal}
.card>p.intro:first-child{margin-top:0}
@media (max-width:480px){table.attempts thead{display:none}table.attempts tr{display:block;border-bottom:1px solid #e6e8ee;padding:.375rem 0}
table.attempts td{display:grid;grid-template-columns:6.5rem minmax(0,1fr);gap:.5rem;border:0;padding:.125rem .25rem;text-align:left;white-space:normal}
table.attempts td::before{content:attr(data-label);color:#5b6478;font-size:.8125rem}table.attempts .badge{justify-self:start}}
/* webhooks */
.wh-list{list-style:none;margin:0;padding:0}
.wh-done{margin-top:1.25rem}
.wh-intro{margin-top:0}
.wh-wide{display:block;min-width:14rem}
input.wh-since{max-width:18rem}
/* search */
form.top-search{display:flex;gap:.375rem;flex:1 1 14rem;max-width:24rem;margin:0}
form.top-search input{min-width:0;flex:1 1 auto}
.search-form{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.5rem 1rem;margin:0 0 .5rem}
.search-form .field{margin:0}
.search-form .search-query{flex:1 1 18rem}
/* api-keys */
.card>.intro:first-child{margin-top:0}
/* settings */
.brand-preview{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem;min-height:2.5rem;margin:0 0 1rem;overflow-wrap:anywhere}
.brand-preview img{display:block;max-height:2.5rem;max-width:10rem;width:auto;height:auto}
.brand-sample{display:block;max-width:100%;height:auto;margin:0 0 .5rem}
input[type=color]{max-width:6rem;padding:.25rem;cursor:pointer}
/* security */
.qr svg{display:block;width:100%;height:auto}
ol.steps{padding-left:1.25rem;margin:0 0 1rem}ol.steps li{margin:0 0 .75rem}
ul.recovery-codes{list-style:none;padding:0;margin:0 0 1rem;display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.5rem}
ul.recovery-codes code{font-size:.9375rem}
form.again{margin-top:.75rem}
form[data-passkey-register]{margin-top:1rem}
#passkey-name{max-width:24rem}
@media (max-width:60rem){.frame{display:block;padding:0 .75rem}
nav.sections{padding:.5rem 0 0;display:flex;flex-wrap:wrap;gap:.125rem .25rem;border-bottom:1px solid #e6e8ee;padding-bottom:.5rem}
nav.sections .group{display:none}
nav.sections ul{display:flex;flex-wrap:wrap;gap:.125rem .25rem;margin:0}
nav.sections a{padding:.25rem .5rem;font-size:.9375rem}
main{padding-top:.75rem}}
@media (max-width:480px){.card{padding:1rem}.stat{font-size:1.25rem}th,td{font-size:.875rem}
dl.facts{grid-template-columns:1fr;gap:0}dl.facts dt{font-size:.8125rem;margin-top:.5rem}
.title-row .actions{margin-left:0}}
`.trim();

export const DASH_CSS_HASH = `'sha256-${createHash('sha256').update(DASH_CSS).digest('base64')}'`;

/** The sections of the dashboard, in the order of the navigation. */
export type Section =
  | 'home'
  | 'payments'
  | 'checkout-sessions'
  | 'payment-links'
  | 'customers'
  | 'invoices'
  | 'events'
  | 'webhooks'
  | 'api-keys'
  | 'settings'
  | 'security'
  | 'team'
  | 'audit-log'
  /** The search results (issue 27): reached from the top bar's box, not listed in the navigation. */
  | 'search'
  | 'exports'
  | 'reports'
  | 'fraud';

/** The sections, each with the permission its pages ask for (the routes' guards check it; the navigation only hides what the role cannot open). */
const NAV: Array<{ group: string; items: Array<[Section, string, Permission]> }> = [
  {
    group: 'Payments',
    items: [['home', 'Home', 'read'], ['payments', 'Payments', 'read'], ['checkout-sessions', 'Checkout sessions', 'read'], ['payment-links', 'Payment links', 'read'], ['customers', 'Customers', 'read'], ['invoices', 'Invoices', 'read'], ['reports', 'Reports', 'read'], ['exports', 'Exports', 'export'], ['fraud', 'Fraud', 'fraud.manage']],
  },
  { group: 'Developers', items: [['events', 'Events', 'developers.read'], ['webhooks', 'Webhooks', 'developers.read'], ['api-keys', 'API keys', 'developers.read']] },
  { group: 'Account', items: [['settings', 'Settings', 'settings.manage'], ['security', 'Security', 'read'], ['team', 'Team', 'team.manage'], ['audit-log', 'Audit log', 'audit.read']] },
];

const SECTIONS = new Set<string>(NAV.flatMap((g) => g.items.map(([key]) => key)));

/** The section a dashboard path belongs to (`/dashboard/payments/pay_…` is in payments); home when none. */
export function sectionOf(path: string): Section {
  const first = /^\/dashboard\/([a-z-]+)/.exec(path)?.[1];
  return first && SECTIONS.has(first) ? (first as Section) : 'home';
}

/** The path of a section's first page. */
export const sectionPath = (section: Section): string => (section === 'home' ? '/dashboard' : `/dashboard/${section}`);

/** The dashboard's own script (copy buttons), served from the service itself (pages.ts). */
export const DASH_SCRIPT_PATH = '/dashboard/assets/dashboard.js';

function documentOf(title: string, body: Html, script?: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" href="${FAVICON_HREF}">
<style>${raw(DASH_CSS)}</style>
${script ? html`<script src="${script}" defer></script>` : ''}
</head>
<body>
${body}
</body>
</html>
`.value;
}

export interface ShellPage {
  section: Section;
  title: string;
  body: Html;
  /** Links above the heading: [label, href] from the section down. */
  crumbs?: Array<[string, string]>;
  /** Buttons or links beside the heading. */
  actions?: Html;
}

/** What the whole deployment lacks, said on every page until it is set (issue 22). */
export interface ShellNotices {
  /** SMTP_URL is unset: emails only go to the log. */
  emailUnset: boolean;
}

const EMAIL_BANNER = html`<div class="alert warn" role="note" data-email-banner><p><strong>Email is not set up.</strong> SMTP_URL is unset, so receipts, invoices, reminders and invitations are written to the service's log, not sent: nobody receives them, and they are listed as logged. Set SMTP_URL and EMAIL_FROM to send them.</p></div>`;

/**
 * A page of a signed-in user: the test banner in test mode, the top bar, the sections, then the
 * page. `csrf` signs the mode switch and sign-out forms; `script` is the versioned script URL.
 */
export function shellPage(session: SessionRow, csrf: string, script: string, p: ShellPage, notices: ShellNotices = { emailUnset: false }): string {
  const name = session.business_name ?? session.account_id;
  const live = session.livemode;
  return documentOf(
    `${p.title} · ${live ? '' : 'Test · '}Dashboard`,
    html`<a class="skip" href="#main">Skip to content</a>
${live ? '' : html`<div class="test-banner" role="note">TEST MODE: you are viewing test data. Nothing here is real money.</div>`}
<header class="top"><div class="top-inner">
<span class="brand">${name}</span>
<form class="inline top-search" method="get" action="/dashboard/search" role="search">
<label for="top-search-q" class="sr-only">Search payments</label>
<input id="top-search-q" type="search" name="q" placeholder="Search payments" maxlength="1000" autocomplete="off">
<button type="submit">Search</button>
</form>
<form class="inline mode" method="post" action="/dashboard/mode">
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="mode" value="${live ? 'test' : 'live'}">
<input type="hidden" name="back" value="${sectionPath(p.section)}">
<span>Viewing <span class="pill ${live ? 'live' : 'test'}" data-mode="${live ? 'live' : 'test'}">${live ? 'Live data' : 'Test data'}</span></span>
<button type="submit">${live ? 'Switch to test data' : 'Switch to live data'}</button>
</form>
<form class="inline" method="post" action="/dashboard/sign-out">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign out</button>
</form>
</div></header>
<div class="frame">
<nav class="sections" aria-label="Dashboard">${NAV.map((g) => ({ ...g, items: g.items.filter(([, , permission]) => can(session.role, permission)) }))
      .filter((g) => g.items.length)
      .map(
        (g) => html`<p class="group" aria-hidden="true">${g.group}</p><ul>${g.items.map(
          ([key, label]) => html`<li><a href="${sectionPath(key)}"${key === p.section ? raw(' aria-current="page"') : ''}>${label}</a></li>`,
        )}</ul>`,
      )}</nav>
<main id="main">
${notices.emailUnset ? EMAIL_BANNER : ''}
${p.crumbs?.length ? html`<p class="crumbs">${p.crumbs.map(([label, href], i) => html`${i ? ' / ' : ''}<a href="${href}">${label}</a>`)}</p>` : ''}
<div class="title-row"><h1>${p.title}</h1>${p.actions ? html`<div class="actions">${p.actions}</div>` : ''}</div>
${p.body}
</main>
</div>`,
    script,
  );
}

/** A page outside the shell (sign-in, set-password, errors before sign-in). */
export function plainPage(title: string, body: Html): string {
  return documentOf(`${title} · Dashboard`, html`<main id="main" class="narrow"><h1>${title}</h1>${body}</main>`);
}

export const messagePage = (title: string, message: string): string => plainPage(title, html`<div class="card"><p>${message}</p></div>`);
