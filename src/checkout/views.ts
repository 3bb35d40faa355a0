import { formatAmount } from '../lib/currency.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { RefundRow } from '../refunds/store.ts';
import { alertBox, html, renderPage, type Html, type PageBrand } from '../pages/index.ts';
import type { CardFormErrors } from '../processor/cards.ts';
import type { CardSetupRow, SessionRow } from './store.ts';
import { dueText, isPlanChoice, schedule } from '../lib/installments.ts';

/** Where the page's forms post: paths under the mount point of the hosted pages. */

/** What a payer is told while an attempt of the session is with the processor (card form and Payment Element). */
export const IN_PROGRESS = 'A payment for this checkout is being processed. Reload this page in a minute to see its outcome; you will not be charged twice.';
export const IN_REVIEW = 'Your card has been authorised but not charged: the merchant is reviewing this payment. You will hear from them; nothing more is needed from you now.';
export interface PagePaths {
  base: string; // '' or '/checkout'
}

const money = (s: SessionRow, amount = s.amount_cents) => formatAmount(amount, s.currency);
const dateTime = (d: Date) =>
  d.toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
const capitalize = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** The row of badges above a heading: the outcome (Paid, Expired) and "Test mode" for test sessions. */
function badges(s: SessionRow, outcome?: Html): Html {
  if (!outcome && s.livemode) return html``;
  return html`<p class="badges">${outcome ?? ''}${s.livemode ? '' : html`<span class="status off">Test mode</span>`}</p>`;
}

function summary(s: SessionRow, heading: string): Html {
  return html`${badges(s)}
<h1>${heading}</h1>
<p class="amount">${money(s)}</p>
${s.description ? html`<p class="description">${s.description}</p>` : ''}
${planSchedule(s)}
${lineItems(s)}`;
}

/**
 * The first part of an installment plan: "Payment 1 of 3", and every part with its date, counted
 * from now (the plan counts from this payment), so the payer sees what the card will be charged.
 */
function planSchedule(s: SessionRow): Html {
  const plan = isPlanChoice(s.installment) ? s.installment : null;
  if (!plan) return html``;
  const shortened = !s.livemode && plan.test_interval_seconds !== null;
  const parts = schedule(plan.total_cents, plan, new Date(), shortened ? plan.test_interval_seconds : null);
  return html`<p class="plan-note"><strong>Payment 1 of ${plan.count}</strong> of your payment plan (${money(s, plan.total_cents)} in all).
Your card is saved for the next payments:</p>
<ol class="schedule" aria-label="Payment plan">${parts.map(
    (p) => html`<li><span>${p.number === 1 ? 'Today (this payment)' : dueText(p.dueAt, shortened)}</span><span class="num">${money(s, p.amountCents)}</span></li>`,
  )}</ol>
<p class="muted">${plan.agreement.text}</p>`;
}

function lineItems(s: SessionRow): Html {
  if (!s.line_items?.length) return html``;
  return html`<table class="items">
<caption class="sr-only">Items</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${s.line_items.map(
    (i) => html`<tr><td>${i.name}</td><td class="num">${i.quantity}</td><td class="num">${money(s, i.amount * i.quantity)}</td></tr>`,
  )}</tbody>
<tfoot><tr><td colspan="2">Total</td><td class="num">${money(s)}</td></tr></tfoot>
</table>`;
}

export interface FormState {
  csrf: string;
  email: string;
  name?: string;
  errors?: CardFormErrors;
  message?: string | null;
}

/** The alert, then the opening of the card form (a payment's or a setup's): its token and labelled fields; the caller adds its button. */
function cardForm(s: SessionRow, p: PagePaths, state: FormState): Html {
  const hasErrors = state.errors && Object.keys(state.errors).length > 0;
  return html`${alertBox('error', state.message ?? (hasErrors ? 'Please check the highlighted fields.' : null))}
<form method="post" action="${p.base}/${s.id}/pay" novalidate>
<input type="hidden" name="_csrf" value="${state.csrf}">
${field('email', 'Email', html`type="email" autocomplete="email" value="${state.email}"`, state)}
${field('name', 'Name on card', html`type="text" autocomplete="cc-name" value="${state.name ?? ''}"`, state)}
${field('card_number', 'Card number', html`type="text" inputmode="numeric" autocomplete="cc-number" placeholder="1234 1234 1234 1234" maxlength="23"`, state)}
<div class="row">
${field('expiry', 'Expiry', html`type="text" inputmode="numeric" autocomplete="cc-exp" placeholder="MM/YY" maxlength="7"`, state, 'MM/YY')}
${field('cvc', 'CVC', html`type="text" inputmode="numeric" autocomplete="cc-csc" placeholder="123" maxlength="4"`, state)}
</div>`;
}

function field(id: keyof CardFormErrors, label: string, attrs: Html, state: FormState, hint?: string): Html {
  const error = state.errors?.[id];
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
${hint ? html`<div class="label-row"><label for="${id}">${label}</label><span class="hint" id="${id}-hint">${hint}</span></div>` : html`<label for="${id}">${label}</label>`}
<input id="${id}" name="${id}" ${attrs}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''} required>
${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

/** The payment form of an OPEN session. Inputs are labelled; errors are tied to their fields. */
export function checkoutPage(s: SessionRow, p: PagePaths, state: FormState, brand?: PageBrand): string {
  const body = html`<div class="card">
${summary(s, 'Complete your payment')}
${cardForm(s, p, state)}
<button type="submit" class="btn">Pay ${money(s)}</button>
</form>
${s.cancel_url ? html`<a class="cancel" href="${s.cancel_url}">Cancel and return to the merchant</a>` : ''}
${s.livemode ? '' : html`<p class="muted">Test mode: pay with 4242 4242 4242 4242, any future expiry date and any CVC.</p>`}
</div>`;
  return renderPage({ title: `Pay ${money(s)}`, body, brand });
}

/** The simulated 3-D Secure challenge of a pending attempt. */
export function challengePage(s: SessionRow, payment: PaymentRow, p: PagePaths, csrf: string, brand?: PageBrand): string {
  const body = html`<div class="card stack">
${badges(s)}
<h1>Confirm your payment</h1>
<p>Your bank asks you to confirm the payment of <strong>${money(s)}</strong>
with your ${capitalize(payment.card_brand ?? 'card')} card ending in ${payment.card_last4}.</p>
<p class="muted">This is a simulated 3-D Secure challenge.</p>
<form method="post" action="${p.base}/${s.id}/authenticate" class="stack">
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="payment" value="${payment.id}">
<button type="submit" name="outcome" value="complete" class="btn">Complete authentication</button>
<button type="submit" name="outcome" value="fail" class="btn danger">Fail authentication</button>
</form>
</div>`;
  return renderPage({ title: 'Confirm your payment', body, brand });
}

function receiptFacts(s: SessionRow, payment: PaymentRow): Html {
  return html`<dl class="facts">
<dt>Amount paid</dt><dd>${money(s)}</dd>
${payment.amount_refunded_cents > 0 ? html`<dt>Amount refunded</dt><dd>${money(s, payment.amount_refunded_cents)}</dd>` : ''}
<dt>Date</dt><dd>${dateTime(payment.succeeded_at ?? payment.updated_at)}</dd>
<dt>Payment method</dt><dd>${capitalize(payment.card_brand ?? 'card')} •••• ${payment.card_last4}</dd>
${payment.email ? html`<dt>Email</dt><dd>${payment.email}</dd>` : ''}
<dt>Receipt</dt><dd class="mono">${payment.id}</dd>
</dl>`;
}

/** A COMPLETE session's page: the receipt in place of the form, linking the receipt page. */
export function completedPage(s: SessionRow, payment: PaymentRow | undefined, p: PagePaths, successUrl: string, brand?: PageBrand): string {
  const body = html`<div class="card">
${badges(s, html`<span class="status">Paid</span>`)}
<h1>Payment successful. Thank you!</h1>
<p class="amount">${money(s)}</p>
${s.description ? html`<p class="description">${s.description}</p>` : ''}
${payment ? receiptFacts(s, payment) : ''}
<div class="stack">
<a class="btn" href="${p.base}/${s.id}/receipt">View receipt</a>
<a class="btn secondary" href="${successUrl}">Return to the merchant</a>
</div>
</div>`;
  return renderPage({ title: 'Payment successful', body, brand });
}

const REFUND_STATUS: Record<RefundRow['status'], string> = {
  PENDING: 'Pending',
  SUCCEEDED: 'Refunded',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
};

/** The refunds of the payment, oldest first: amount, status and date of each. */
function refundsTable(s: SessionRow, payment: PaymentRow, refunds: readonly RefundRow[]): Html {
  if (!refunds.length) return html``;
  return html`<table class="items refunds">
<caption>Refunds</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Status</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${refunds.map(
    (r) => html`<tr><td>${dateTime(r.created_at)}</td><td>${REFUND_STATUS[r.status]}</td><td class="num">${money(s, r.amount_cents)}</td></tr>`,
  )}</tbody>
<tfoot><tr><td colspan="2">Refunded</td><td class="num">${money(s, payment.amount_refunded_cents)}</td></tr></tfoot>
</table>`;
}

/** The stand-alone receipt of the session's payment, with its refunds. */
export function receiptPage(s: SessionRow, payment: PaymentRow, refunds: readonly RefundRow[] = [], brand?: PageBrand): string {
  const body = html`<div class="card">
${badges(s, html`<span class="status">Paid</span>`)}
<h1>Receipt</h1>
<p class="amount">${money(s)}</p>
${s.description ? html`<p class="description">${s.description}</p>` : ''}
${receiptFacts(s, payment)}
${lineItems(s)}
${refundsTable(s, payment, refunds)}
</div>`;
  return renderPage({ title: `Receipt ${payment.id}`, body, brand });
}

/** An EXPIRED session: says so and offers no form. */
export function expiredPage(s: SessionRow, brand?: PageBrand): string {
  const body = html`<div class="card stack">
${badges(s, html`<span class="status warn">Expired</span>`)}
<h1>This checkout session has expired</h1>
<p>The payment of ${money(s)} can no longer be completed here. Nothing was charged.
Return to the merchant to start again.</p>
${s.cancel_url ? html`<a class="btn secondary" href="${s.cancel_url}">Return to the merchant</a>` : ''}
</div>`;
  return renderPage({ title: 'Checkout expired', body, brand });
}

/** What the Payment Element page needs besides the session: where Stripe.js and our script live, and what they are handed. */
export interface ElementPageState {
  csrf: string;
  email: string;
  message?: string | null;
  publishableKey: string;
  clientSecret: string;
  /** The Elements options of a payment finalized on the server (deferred intent): the session's amount, currency, and whether the card is kept. */
  amount: number;
  currency: string;
  saveCard: boolean;
  stripeJsUrl: string;
  scriptUrl: string;
  prepareUrl: string;
  returnUrl: string;
}

/**
 * The payment page of a session whose processor collects the card itself (Stripe): the card
 * fields are Stripe's Payment Element, mounted by our script into #payment-element, so the card
 * goes from the browser to Stripe and never to us. Everything the script needs is in data
 * attributes (no inline script). The Pay button is enabled by the script once the element is
 * ready; without JavaScript the page says why it cannot work.
 */
export function elementPage(s: SessionRow, p: PagePaths, state: ElementPageState, brand?: PageBrand): string {
  const body = html`<div class="card">
${summary(s, 'Complete your payment')}
<div id="payment-message" class="alert error" role="alert" aria-live="assertive" aria-atomic="true">${state.message ?? ''}</div>
<form id="payment-form" method="post" action="${p.base}/${s.id}/element/prepare" novalidate
 data-publishable-key="${state.publishableKey}" data-client-secret="${state.clientSecret}"
 data-amount="${String(state.amount)}" data-currency="${state.currency}" data-setup-future-usage="${state.saveCard ? 'off_session' : ''}"
 data-prepare-url="${state.prepareUrl}" data-return-url="${state.returnUrl}" data-csrf="${state.csrf}">
<div class="field">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" value="${state.email}" aria-describedby="email-error" required>
<p class="field-error" id="email-error" aria-live="polite"></p>
</div>
<div class="field">
<span class="label" id="payment-element-label">Card details</span>
<div id="payment-element" class="element-mount" role="group" aria-labelledby="payment-element-label"></div>
</div>
<button type="submit" class="btn" id="pay-button" disabled>Pay ${money(s)}</button>
</form>
<noscript><p class="alert info">This payment page needs JavaScript: your card details go straight to our payment processor, Stripe, from your browser. Enable JavaScript and reload the page.</p></noscript>
${s.cancel_url ? html`<a class="cancel" href="${s.cancel_url}">Cancel and return to the merchant</a>` : ''}
${s.livemode ? '' : html`<p class="muted">Test mode: pay with Stripe's test card 4242 4242 4242 4242, any future expiry date and any CVC.</p>`}
</div>`;
  return renderPage({ title: `Pay ${money(s)}`, body, scripts: [state.stripeJsUrl, state.scriptUrl], brand });
}

/** A live session while the service has no live processor keys: no form, and nothing is charged. */
export function livePaymentsOffPage(s: SessionRow, brand?: PageBrand): string {
  const body = html`<div class="card stack">
${summary(s, 'Payment unavailable')}
<div class="alert info" role="status">This merchant cannot take live payments yet. Nothing was charged.
Please contact the merchant or try again later.</div>
${s.cancel_url ? html`<a class="btn secondary" href="${s.cancel_url}">Return to the merchant</a>` : ''}
</div>`;
  return renderPage({ title: 'Payment unavailable', body, brand });
}

/** The card form of a setup session (a plan's card update): the card is saved, nothing is charged. */
export function setupPage(s: SessionRow, p: PagePaths, state: FormState, brand?: PageBrand): string {
  const body = html`<div class="card">
${badges(s)}
<h1>Save a new card</h1>
${s.description ? html`<p class="description">${s.description}</p>` : ''}
<p class="muted">Nothing is charged now: the card is kept by our payment processor for your next payments. Your bank may ask you to confirm it.</p>
${cardForm(s, p, state)}
<button type="submit" class="btn">Save card</button>
</form>
${s.cancel_url ? html`<a class="cancel" href="${s.cancel_url}">Cancel and go back</a>` : ''}
${s.livemode ? '' : html`<p class="muted">Test mode: save 4242 4242 4242 4242, any future expiry date and any CVC.</p>`}
</div>`;
  return renderPage({ title: 'Save a new card', body, brand });
}

/** The simulated 3-D Secure challenge of a card being saved. */
export function setupChallengePage(s: SessionRow, setup: CardSetupRow, p: PagePaths, csrf: string, brand?: PageBrand): string {
  const body = html`<div class="card stack">
${badges(s)}
<h1>Confirm your card</h1>
<p>Your bank asks you to confirm saving your ${capitalize(setup.card_brand ?? 'card')} card ending in ${setup.card_last4 ?? ''} for later payments. Nothing is charged now.</p>
<p class="muted">This is a simulated 3-D Secure challenge.</p>
<form method="post" action="${p.base}/${s.id}/authenticate" class="stack">
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="setup" value="${setup.id}">
<button type="submit" name="outcome" value="complete" class="btn">Complete authentication</button>
<button type="submit" name="outcome" value="fail" class="btn danger">Fail authentication</button>
</form>
</div>`;
  return renderPage({ title: 'Confirm your card', body, brand });
}

/** A COMPLETE setup session: the card saved, and the way back. */
export function setupCompletedPage(s: SessionRow, setup: CardSetupRow | undefined, successUrl: string, brand?: PageBrand): string {
  const body = html`<div class="card stack">
${badges(s, html`<span class="status">Saved</span>`)}
<h1>Your card is saved</h1>
${setup?.card_last4 ? html`<p>Your next payments will be charged to your ${capitalize(setup.card_brand ?? 'card')} card ending in ${setup.card_last4}. A payment that failed is tried again now.</p>` : ''}
<a class="btn" href="${successUrl}">Continue</a>
</div>`;
  return renderPage({ title: 'Card saved', body, brand });
}

/** An EXPIRED setup session. */
export function setupExpiredPage(s: SessionRow, brand?: PageBrand): string {
  const body = html`<div class="card stack">
${badges(s, html`<span class="status warn">Expired</span>`)}
<h1>This page has expired</h1>
<p>No card was saved. Go back and start again.</p>
${s.cancel_url ? html`<a class="btn secondary" href="${s.cancel_url}">Go back</a>` : ''}
</div>`;
  return renderPage({ title: 'Page expired', body, brand });
}
