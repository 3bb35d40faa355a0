import { formatAmount } from '../lib/currency.ts';
import { dueText } from '../lib/installments.ts';
import { formatDate, invoiceTitle, statusLabel } from '../invoices/views.ts';
import { alertBox, html, type Html, type PageBrand } from '../pages/index.ts';
import type { RefundRow } from '../refunds/store.ts';
import { portalDocument } from './layout.ts';
import type { PortalInstallment, PortalInvoice, PortalPayment, PortalPlan } from './records.ts';

/**
 * The customer portal's pages (server-rendered, no script): signed out, the email form and what
 * follows it; signed in, the overview, payments, invoices and installment plans of one customer.
 */

/** What every portal page knows: the merchant, where the portal lives, the mode. */
export interface PortalView {
  brand: PageBrand & { support_email: string | null };
  /** `/portal/acct_…` */
  base: string;
  livemode: boolean;
}

/** The signed-out pages' form. */
export interface SignInForm {
  csrf: string;
  email?: string;
  error?: string | null;
  /** The email field's own problem (tied to it). */
  fieldError?: string | null;
  notice?: string | null;
}

/** What the signed-in pages add: who is signed in, the sign-out form's token, the way back to the merchant. */
export interface SignedInView extends PortalView {
  csrf: string;
  customer: { email: string; first_name: string; last_name: string; company_name: string | null };
  returnUrl: string | null;
  /** Where the hosted invoice pages and receipts live (INVOICE_URL, CHECKOUT_URL). */
  invoiceUrl: string;
  checkoutUrl: string;
}

const merchantOf = (v: PortalView): string => v.brand.business_name ?? 'the merchant';
const testBadge = (v: PortalView): Html => (v.livemode ? html`` : html`<p class="badges"><span class="status off">Test mode</span></p>`);
const dateTime = (d: Date) => `${d.toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })} UTC`;
const shortDate = (d: Date) => d.toLocaleString('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
const capitalize = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
/** "Visa •••• 4242": the brand and last four only. */
export const cardText = (brand: string | null, last4: string | null) => (last4 ? `${capitalize(brand ?? 'card')} •••• ${last4}` : null);

// ---- Signed out

function emailForm(v: PortalView, f: SignInForm, button: string): Html {
  const invalid = f.fieldError ? html` aria-invalid="true" aria-describedby="email-error"` : html``;
  return html`<form method="post" action="${v.base}" novalidate>
<input type="hidden" name="_csrf" value="${f.csrf}">
${v.livemode ? '' : html`<input type="hidden" name="mode" value="test">`}
<div class="field"><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" inputmode="email" required maxlength="254" value="${f.email ?? ''}"${invalid}>
${f.fieldError ? html`<p class="field-error" id="email-error">${f.fieldError}</p>` : ''}</div>
<button type="submit" class="btn">${button}</button>
</form>`;
}

/** The portal's door: an email field, a link by email, no password. */
export function signInPage(v: PortalView, f: SignInForm): string {
  const body = html`<div class="card">
${testBadge(v)}<h1>Sign in to your account</h1>
<p class="muted">See your payments, receipts, invoices and installment plans with ${merchantOf(v)}. Enter the email you use with ${merchantOf(v)} and we will email you a sign-in link: no password needed.</p>
${alertBox('error', f.error)}${alertBox('success', f.notice)}
${emailForm(v, f, 'Email me a sign-in link')}
</div>${support(v)}`;
  return portalDocument(`Sign in – ${merchantOf(v)}`, v.brand, body);
}

/**
 * The answer to every well-formed request for a link, known email or not: the same words, the same
 * status (the page never tells whether an email is a customer's).
 */
export function linkSentPage(v: PortalView, f: SignInForm & { email: string }): string {
  const body = html`<div class="card stack">
${testBadge(v)}<h1>Check your email</h1>
<div class="alert success" role="status">If ${f.email} is known to ${merchantOf(v)}, a sign-in link is on its way to it. The link works once, for 15 minutes.</div>
<p class="muted">Nothing after a few minutes? Look in your spam folder, check the address, or ask again.</p>
${emailForm(v, f, 'Send another link')}
</div>${support(v)}`;
  return portalDocument(`Check your email – ${merchantOf(v)}`, v.brand, body);
}

/** A link used, expired, of another account or made up: the same page, with the form for a new one. */
export function linkGonePage(v: PortalView, f: SignInForm): string {
  const body = html`<div class="card">
${testBadge(v)}<h1>This link no longer works</h1>
<p class="muted">A sign-in link works once, for 15 minutes. Enter your email to get a new one.</p>
${emailForm(v, f, 'Email me a new link')}
</div>${support(v)}`;
  return portalDocument(`Link expired – ${merchantOf(v)}`, v.brand, body);
}

/** Who a page names: "Ada Lovelace (ada@example.com)", or the email alone. */
const person = (c: { email: string; first_name: string; last_name: string }) => {
  const name = `${c.first_name} ${c.last_name}`.trim();
  return name ? `${name} (${c.email})` : c.email;
};

/** What the switch page needs: who is signed in, who the link is for, and the link's own parts to post. */
export interface SwitchForm {
  csrf: string;
  current: { email: string; first_name: string; last_name: string };
  next: { email: string; first_name: string; last_name: string };
  token: string;
  returnUrl: string;
  sig: string;
}

/**
 * A sign-in link of another customer, followed while a session is open: nothing changes until the
 * customer confirms with a POST (someone may have sent them a link to their own account).
 */
export function switchCustomerPage(v: PortalView, f: SwitchForm): string {
  const body = html`<div class="card stack">
${testBadge(v)}<h1>Sign in as someone else?</h1>
<p>You are signed in as <strong>${person(f.current)}</strong>. This link signs in to another account: <strong>${person(f.next)}</strong>.</p>
<p class="muted">Continue only if you asked for this link yourself. If someone sent it to you, stay signed in: whatever you did in their account, they would see.</p>
<form method="post" action="${v.base}/sign-in">
<input type="hidden" name="_csrf" value="${f.csrf}">
<input type="hidden" name="token" value="${f.token}">
${f.returnUrl ? html`<input type="hidden" name="return_url" value="${f.returnUrl}"><input type="hidden" name="sig" value="${f.sig}">` : ''}
<button type="submit" class="btn">Sign in as ${f.next.email}</button>
</form>
<p><a href="${v.base}">Stay signed in as ${f.current.email}</a></p>
</div>${support(v)}`;
  return portalDocument(`Sign in as someone else? – ${merchantOf(v)}`, v.brand, body);
}

function support(v: PortalView): Html {
  if (!v.brand.support_email) return html``;
  return html`<p class="muted support">Questions? Write to <a href="mailto:${v.brand.support_email}">${v.brand.support_email}</a>.</p>`;
}

/** A page with a heading and one sentence in the merchant's branding: not found, refused. */
export function portalMessagePage(v: Pick<PortalView, 'brand'>, heading: string, message: string, back?: { href: string; label: string }): string {
  return portalDocument(
    heading,
    v.brand,
    html`<div class="card stack"><h1>${heading}</h1><p>${message}</p>${back ? html`<p><a href="${back.href}">${back.label}</a></p>` : ''}</div>`,
  );
}

// ---- Signed in

type Section = 'home' | 'payments' | 'invoices' | 'plans';

function shell(v: SignedInView, section: Section, title: string, body: Html, showPlans: boolean): string {
  const item = (s: Section, href: string, label: string) =>
    html`<li><a href="${href}"${s === section ? html` aria-current="page"` : ''}>${label}</a></li>`;
  const name = `${v.customer.first_name} ${v.customer.last_name}`.trim();
  const page = html`<div class="topbar">
<nav class="portal" aria-label="Your account"><ul>
${item('home', v.base, 'Overview')}${item('payments', `${v.base}/payments`, 'Payments')}${item('invoices', `${v.base}/invoices`, 'Invoices')}${showPlans ? item('plans', `${v.base}/plans`, 'Plans') : ''}
</ul></nav>
${v.livemode ? '' : html`<span class="status off">Test mode</span>`}
</div>
${body}
<div class="card signed-in">
<p class="muted">Signed in as <strong>${name || v.customer.email}</strong>${name ? html` (${v.customer.email})` : ''}</p>
<form method="post" action="${v.base}/sign-out"><input type="hidden" name="_csrf" value="${v.csrf}"><button type="submit" class="btn secondary small">Sign out</button></form>
</div>
${v.returnUrl ? html`<a class="back" href="${v.returnUrl}">Back to ${merchantOf(v)}</a>` : ''}${support(v)}`;
  return portalDocument(`${title} – ${merchantOf(v)}`, v.brand, page);
}

/** How the portal names a payment's state. */
export function paymentStatus(p: PortalPayment): { label: string; tone: '' | 'off' | 'warn' } {
  if (p.status === 'FAILED') return { label: 'Failed', tone: 'off' };
  if (p.status === 'PENDING') return { label: p.next_action === 'three_d_secure' ? 'Awaiting authentication' : 'Processing', tone: 'off' };
  if (p.disputed) return { label: 'Disputed', tone: 'warn' };
  if (p.amount_refunded_cents >= p.amount_cents) return { label: 'Refunded', tone: 'off' };
  if (p.amount_refunded_cents > 0) return { label: 'Partly refunded', tone: 'warn' };
  return { label: 'Paid', tone: '' };
}

const badge = (s: { label: string; tone: string }) => html`<span class="status${s.tone ? ` ${s.tone}` : ''}">${s.label}</span>`;

/** A later part's description already says "(payment 2 of 3)" (src/installments/charge.ts); the first part's is its session's. */
const paymentTitle = (p: PortalPayment) => {
  const base = p.description ?? (p.invoice_number ? `Invoice ${p.invoice_number}` : 'Payment');
  return p.installment_number === 1 && p.installment_count ? `${base} (payment 1 of ${p.installment_count})` : base;
};

function paymentItems(v: SignedInView, payments: readonly PortalPayment[]): Html {
  if (!payments.length) return html`<p class="empty">No payments yet.</p>`;
  return html`<ul class="records">${payments.map((p) => {
    const card = cardText(p.card_brand, p.card_last4);
    return html`<li><span class="what"><a href="${v.base}/payments/${p.id}">${paymentTitle(p)}</a>
<span class="meta">${shortDate(p.succeeded_at ?? p.created_at)}${card ? ` · ${card}` : ''}</span>
<span class="meta">${badge(paymentStatus(p))}</span></span>
<span class="side">${formatAmount(p.amount_cents, p.currency)}</span></li>`;
  })}</ul>`;
}

const invoiceHosted = (v: SignedInView, inv: PortalInvoice) => `${v.invoiceUrl}/${inv.hosted_token}`;
const isOpen = (inv: PortalInvoice) => (inv.status === 'OPEN' || inv.status === 'UNCOLLECTIBLE') && inv.amount_due_cents > 0;
/** What an open invoice offers: Pay, or, while a plan pays it, the way to that plan. */
const invoiceAction = (v: SignedInView, inv: PortalInvoice, pay: Html, small: boolean): Html =>
  inv.plan_id ? html`<a class="${small ? 'small' : 'btn secondary'}" href="${v.base}/plans/${inv.plan_id}">Paid by installments<span class="sr-only">: ${invoiceTitle(inv)}</span></a>` : pay;
const invoiceTone = (inv: PortalInvoice): '' | 'off' | 'warn' => (inv.status === 'PAID' ? '' : inv.status === 'VOID' ? 'off' : 'warn');

function invoiceItems(v: SignedInView, invoices: readonly PortalInvoice[], empty = 'No invoices.'): Html {
  if (!invoices.length) return html`<p class="empty">${empty}</p>`;
  return html`<ul class="records">${invoices.map((inv) => {
    const open = isOpen(inv);
    return html`<li><span class="what"><a href="${v.base}/invoices/${inv.id}">${invoiceTitle(inv)}</a>
<span class="meta">${open && inv.due_date ? `Due ${formatDate(inv.due_date)}` : `Sent ${formatDate(inv.sent_at ?? inv.created_at)}`}</span>
<span class="meta">${badge({ label: statusLabel(inv), tone: invoiceTone(inv) })}</span></span>
<span class="side">${formatAmount(open ? inv.amount_due_cents : inv.total_cents, inv.currency)}
${open ? html`<br>${invoiceAction(v, inv, html`<a class="btn small" href="${invoiceHosted(v, inv)}">Pay<span class="sr-only"> ${invoiceTitle(inv)}</span></a>`, true)}` : html`<br><a class="small" href="${invoiceHosted(v, inv)}/pdf">PDF<span class="sr-only"> of ${invoiceTitle(inv)}</span></a>`}</span></li>`;
  })}</ul>`;
}

const PLAN_STATUS: Record<PortalPlan['status'], { label: string; tone: '' | 'off' | 'warn' }> = {
  ACTIVE: { label: 'Active', tone: '' },
  COMPLETED: { label: 'Paid in full', tone: 'off' },
  DEFAULTED: { label: 'Payments stopped', tone: 'warn' },
  CANCELLED: { label: 'Cancelled', tone: 'off' },
};
const every = (p: PortalPlan) => (p.interval === 'week' ? 'weekly' : 'monthly');
/** A date of a plan's schedule: with its time on a test plan's shortened calendar, as its pages showed it. */
const planDate = (p: PortalPlan, d: Date) => (p.shortened ? dueText(d, true) : shortDate(d));

function planItems(v: SignedInView, plans: readonly PortalPlan[]): Html {
  if (!plans.length) return html`<p class="empty">No installment plans.</p>`;
  return html`<ul class="records">${plans.map((p) => {
    const card = cardText(p.card_brand, p.card_last4);
    return html`<li><span class="what"><a href="${v.base}/plans/${p.id}">${p.description ?? 'Installment plan'}</a>
<span class="meta">${p.count} ${every(p)} payments · ${p.paid_count} of ${p.count} paid${card ? ` · ${card}` : ''}</span>
<span class="meta">${badge(PLAN_STATUS[p.status])}${p.status === 'ACTIVE' && p.next_due_at && p.next_amount_cents !== null ? ` Next: ${formatAmount(p.next_amount_cents, p.currency)} on ${planDate(p, p.next_due_at)}` : ''}</span></span>
<span class="side">${formatAmount(p.total_cents, p.currency)}</span></li>`;
  })}</ul>`;
}

export interface HomeData {
  openInvoices: PortalInvoice[];
  payments: PortalPayment[];
  morePayments: boolean;
  settledInvoices: PortalInvoice[];
  moreInvoices: boolean;
  plans: PortalPlan[] | null;
  notice?: string | null;
}

export function homePage(v: SignedInView, d: HomeData): string {
  const name = v.customer.first_name.trim();
  const body = html`<div class="card">
<h1>${name ? `Hello, ${name}` : 'Your account'}</h1>
<p class="muted">Your payments, invoices and installment plans with ${merchantOf(v)}.</p>
${alertBox('success', d.notice)}
</div>
${d.openInvoices.length ? html`<section class="card" aria-labelledby="to-pay"><h2 id="to-pay">Invoices to pay</h2>${invoiceItems(v, d.openInvoices)}</section>` : ''}
${d.plans?.length ? html`<section class="card" aria-labelledby="plans"><h2 id="plans">Installment plans</h2>${planItems(v, d.plans)}</section>` : ''}
<section class="card" aria-labelledby="payments"><h2 id="payments">Recent payments</h2>${paymentItems(v, d.payments)}
${d.morePayments ? html`<p class="more"><a href="${v.base}/payments">All payments</a></p>` : ''}</section>
<section class="card" aria-labelledby="invoices"><h2 id="invoices">Past invoices</h2>${invoiceItems(v, d.settledInvoices, 'No past invoices.')}
${d.moreInvoices ? html`<p class="more"><a href="${v.base}/invoices">All invoices</a></p>` : ''}</section>`;
  return shell(v, 'home', 'Your account', body, d.plans !== null);
}

function pager(base: string, next: string | null, first: boolean): Html {
  if (!next && first) return html``;
  return html`<p class="pager">${first ? html`<span></span>` : html`<a href="${base}">Newest</a>`}${next ? html`<a href="${base}?older_than=${next}">Older</a>` : ''}</p>`;
}

export function paymentsPage(v: SignedInView, payments: readonly PortalPayment[], next: string | null, first: boolean, showPlans: boolean): string {
  const body = html`<section class="card"><h1>Payments</h1>${paymentItems(v, payments)}${pager(`${v.base}/payments`, next, first)}</section>`;
  return shell(v, 'payments', 'Payments', body, showPlans);
}

export function invoicesPage(v: SignedInView, invoices: readonly PortalInvoice[], next: string | null, first: boolean, showPlans: boolean): string {
  const body = html`<section class="card"><h1>Invoices</h1>${invoiceItems(v, invoices)}${pager(`${v.base}/invoices`, next, first)}</section>`;
  return shell(v, 'invoices', 'Invoices', body, showPlans);
}

export function plansPage(v: SignedInView, plans: readonly PortalPlan[]): string {
  const body = html`<section class="card"><h1>Installment plans</h1>${planItems(v, plans)}</section>`;
  return shell(v, 'plans', 'Installment plans', body, true);
}

const REFUND_STATUS: Record<RefundRow['status'], string> = { PENDING: 'Pending', SUCCEEDED: 'Refunded', FAILED: 'Failed', CANCELLED: 'Cancelled' };

export function paymentPage(v: SignedInView, p: PortalPayment, refunds: readonly RefundRow[], showPlans: boolean): string {
  const money = (n: number) => formatAmount(n, p.currency);
  const card = cardText(p.card_brand, p.card_last4);
  const body = html`<div class="card">
<p class="badges">${badge(paymentStatus(p))}</p>
<h1>${paymentTitle(p)}</h1>
<p class="amount">${money(p.amount_cents)}</p>
<dl class="facts">
<dt>Date</dt><dd>${dateTime(p.succeeded_at ?? p.failed_at ?? p.created_at)}</dd>
${card ? html`<dt>Payment method</dt><dd>${card}</dd>` : ''}
${p.invoice_number ? html`<dt>Invoice</dt><dd>${p.invoice_number}</dd>` : ''}
${p.status === 'FAILED' && p.failure_message ? html`<dt>Why it failed</dt><dd>${p.failure_message}</dd>` : ''}
${p.amount_refunded_cents > 0 ? html`<dt>Refunded</dt><dd>${money(p.amount_refunded_cents)}</dd>` : ''}
<dt>Reference</dt><dd class="mono">${p.id}</dd>
</dl>
${refunds.length ? html`<table class="items"><caption class="sr-only">Refunds</caption>
<thead><tr><th scope="col">Refund</th><th scope="col">Status</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${refunds.map((r) => html`<tr><td>${shortDate(r.created_at)}</td><td>${REFUND_STATUS[r.status]}</td><td class="num">${money(r.amount_cents)}</td></tr>`)}</tbody>
</table>` : ''}
${p.receipt_session_id ? html`<a class="btn" href="${v.checkoutUrl}/${p.receipt_session_id}/receipt">View receipt</a>` : ''}
</div>`;
  return shell(v, 'payments', paymentTitle(p), body, showPlans);
}

export function invoicePage(v: SignedInView, inv: PortalInvoice, showPlans: boolean): string {
  const money = (n: number) => formatAmount(n, inv.currency);
  const open = isOpen(inv);
  const body = html`<div class="card">
<p class="badges">${badge({ label: statusLabel(inv), tone: invoiceTone(inv) })}</p>
<h1>${invoiceTitle(inv)}</h1>
<p class="amount">${money(open ? inv.amount_due_cents : inv.total_cents)}</p>
${inv.description ? html`<p class="description">${inv.description}</p>` : ''}
<dl class="facts">
<dt>Sent</dt><dd>${formatDate(inv.sent_at ?? inv.created_at)}</dd>
${inv.due_date ? html`<dt>Due</dt><dd>${formatDate(inv.due_date)}</dd>` : ''}
${inv.paid_at ? html`<dt>Paid</dt><dd>${formatDate(inv.paid_at)}</dd>` : ''}
</dl>
<table class="items"><caption class="sr-only">Items</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${inv.line_items.map((i) => html`<tr><td>${i.name}</td><td class="num">${i.quantity}</td><td class="num">${money(i.amount * i.quantity)}</td></tr>`)}</tbody>
<tfoot><tr><td colspan="2">Total</td><td class="num">${money(inv.total_cents)}</td></tr>
${inv.amount_paid_cents > 0 ? html`<tr><td colspan="2">Paid</td><td class="num">${money(inv.amount_paid_cents)}</td></tr>` : ''}
${inv.status !== 'VOID' ? html`<tr><td colspan="2">Amount due</td><td class="num">${money(inv.amount_due_cents)}</td></tr>` : ''}</tfoot>
</table>
<div class="stack">
${open ? invoiceAction(v, inv, html`<a class="btn" href="${invoiceHosted(v, inv)}">Pay ${money(inv.amount_due_cents)}</a>`, false) : ''}
<a class="btn secondary" href="${invoiceHosted(v, inv)}/pdf">Download PDF</a>
</div>
</div>`;
  return shell(v, 'invoices', invoiceTitle(inv), body, showPlans);
}

const PART_STATUS: Record<PortalInstallment['status'], string> = {
  SCHEDULED: 'Scheduled',
  PAID: 'Paid',
  RETRYING: 'Failed, retrying',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
};

/** What the plan page offers for its card: a form (the card update exists and the plan is active), or nothing. */
export interface CardUpdate {
  /** The form's CSRF token: a POST to `${base}/plans/:id/card`. */
  csrf: string;
}

/** A sentence at the top of a page after an action (back from the card page). */
export interface Notice {
  kind: 'success' | 'info';
  text: string;
}

export function planPage(v: SignedInView, p: PortalPlan, schedule: readonly PortalInstallment[], cardUpdate: CardUpdate | null, notice: Notice | null): string {
  const money = (n: number) => formatAmount(n, p.currency);
  const card = cardText(p.card_brand, p.card_last4);
  const body = html`<div class="card">
${notice ? alertBox(notice.kind, notice.text) : ''}
<p class="badges">${badge(PLAN_STATUS[p.status])}</p>
<h1>${p.description ?? 'Installment plan'}</h1>
<p class="amount">${money(p.total_cents)}</p>
<dl class="facts">
<dt>Plan</dt><dd>${p.count} ${every(p)} payments</dd>
<dt>Paid so far</dt><dd>${money(p.paid_cents)} (${p.paid_count} of ${p.count})</dd>
${p.status === 'ACTIVE' && p.next_due_at && p.next_amount_cents !== null ? html`<dt>Next payment</dt><dd>${money(p.next_amount_cents)} on ${planDate(p, p.next_due_at)}</dd>` : ''}
${card ? html`<dt>Card</dt><dd>${card}</dd>` : ''}
<dt>Started</dt><dd>${shortDate(p.created_at)}</dd>
</dl>
<table class="items"><caption>Schedule</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${schedule.map(
    (i) => html`<tr><td>${i.number}. ${planDate(p, i.paid_at ?? i.due_at)}</td><td>${PART_STATUS[i.status]}${i.status === 'RETRYING' && i.next_attempt_at ? html`<br><span class="muted">next try ${planDate(p, i.next_attempt_at)}</span>` : ''}</td><td class="num">${money(i.amount_cents)}</td></tr>`,
  )}</tbody>
</table>
${cardUpdate ? html`<form method="post" action="${v.base}/plans/${p.id}/card">
<input type="hidden" name="_csrf" value="${cardUpdate.csrf}">
<button type="submit" class="btn">Replace the card</button>
<p class="muted">You will enter the new card on a secure page; your bank may ask you to confirm it. Nothing is charged now; the next payments are taken from the new card.</p>
</form>` : p.status === 'ACTIVE' ? html`<p class="muted">To change the card of this plan, please contact ${merchantOf(v)}${v.brand.support_email ? html` at <a href="mailto:${v.brand.support_email}">${v.brand.support_email}</a>` : ''}.</p>` : ''}
</div>`;
  return shell(v, 'plans', p.description ?? 'Installment plan', body, true);
}
