import { alertBox, formatAmount, html, messagePage, renderPage, type Html, type PageBrand } from '../pages/index.ts';
import type { LinkSource } from './schema.ts';
import type { PaymentLinkRow } from './store.ts';

/** What the payer typed, and what was wrong with it, when the form comes back. */
export interface PayerForm {
  name?: string;
  email?: string;
  phone?: string;
  errors?: Partial<Record<'name' | 'email' | 'phone', string>>;
  message?: string | null;
}

const money = (l: PaymentLinkRow) => formatAmount(l.amount_cents, l.currency);
/**
 * The heading of the public page. The link's `name` is internal (the merchant's dashboard name,
 * spec 5.5) and never shown to payers: the description, else the business name, else "Payment".
 */
export const publicTitle = (l: PaymentLinkRow, brand: PageBrand): string => l.description ?? brand.business_name ?? 'Payment';
const testMode = (l: PaymentLinkRow) => (l.livemode ? '' : html`<span class="status off">Test mode</span>`);
/** The badges above the heading, on one line: test mode, and the state when it is not the usual one. */
const badges = (l: PaymentLinkRow, state?: string) =>
  l.livemode && !state ? html`` : html`<p class="merchant">${testMode(l)} ${state ? html`<span class="status off">${state}</span>` : ''}</p>`;

function summary(l: PaymentLinkRow, brand: PageBrand): Html {
  return html`${badges(l)}
<h1>${publicTitle(l, brand)}</h1>
<p class="amount">${money(l)}</p>`;
}

function field(id: 'name' | 'email' | 'phone', label: string, attrs: Html, form: PayerForm): Html {
  const error = form.errors?.[id];
  return html`<div class="field">
<label for="${id}">${label}</label>
<input id="${id}" name="${id}" ${attrs} value="${form[id] ?? ''}"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''} required>
${error ? html`<p class="alert error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

/** The page of a link that takes payments: what is paid, the fields it collects, one button. */
export function linkPage(l: PaymentLinkRow, brand: PageBrand, action: string, csrf: string, source: LinkSource, form: PayerForm = {}): string {
  const hasErrors = form.errors && Object.keys(form.errors).length > 0;
  const body = html`<div class="card">
${summary(l, brand)}
${l.installment_enabled ? alertBox('info', 'Installments available: this merchant offers to spread the payment over several installments.') : ''}
${alertBox('error', form.message ?? (hasErrors ? 'Please check the highlighted fields.' : null))}
<form method="post" action="${action}" novalidate>
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="src" value="${source}">
${l.collect_name ? field('name', 'Name', html`type="text" autocomplete="name" maxlength="200"`, form) : ''}
${l.collect_email ? field('email', 'Email', html`type="email" autocomplete="email" maxlength="254"`, form) : ''}
${l.collect_phone ? field('phone', 'Phone', html`type="tel" autocomplete="tel" maxlength="32"`, form) : ''}
<button type="submit" class="btn">Continue to payment</button>
</form>
${l.livemode ? '' : html`<p class="muted">Test mode: no real money moves. The next page takes the test card 4242 4242 4242 4242.</p>`}
</div>`;
  return renderPage({ title: `${publicTitle(l, brand)}: ${money(l)}`, body, brand });
}

/** A link that takes no payment (ended, deactivated or expired): the reason, and no form. */
export function endedPage(l: PaymentLinkRow, brand: PageBrand, badge: string, message: string): string {
  const body = html`<div class="card stack">
${badges(l, badge)}
<h1>${publicTitle(l, brand)}</h1>
<p class="amount">${money(l)}</p>
${alertBox('info', message)}
<p class="muted">Nothing can be paid on this page. If you still want to pay, ask the merchant for a new link.</p>
</div>`;
  return renderPage({ title: `${publicTitle(l, brand)}: ${badge}`, body, brand });
}

/** A live link while live payments are off (no live processor keys): the payer is told, and nothing starts. */
export function paymentsOffPage(l: PaymentLinkRow, brand: PageBrand): string {
  const body = html`<div class="card stack">
${badges(l, 'Unavailable')}
<h1>${publicTitle(l, brand)}</h1>
<p class="amount">${money(l)}</p>
${alertBox('info', 'This merchant cannot take live payments yet. Nothing was charged. Please contact the merchant or try again later.')}
</div>`;
  return renderPage({ title: `${publicTitle(l, brand)}: unavailable`, body, brand });
}

/** Where the hosted checkout sends the payer after a successful payment on the link. */
export function thanksPage(l: PaymentLinkRow, brand: PageBrand, receiptUrl: string | null): string {
  const body = html`<div class="card stack">
${badges(l)}
${alertBox('success', receiptUrl ? 'Payment successful. Thank you!' : 'Thank you!')}
<h1>${publicTitle(l, brand)}</h1>
<p class="amount">${money(l)}</p>
${receiptUrl ? html`<a class="btn" href="${receiptUrl}">View receipt</a>` : html`<p>We could not find a completed payment for this page.</p>`}
</div>`;
  return renderPage({ title: 'Thank you', body, brand });
}

export const notFoundPage = (): string =>
  messagePage('Payment link not found', 'This payment link does not exist. Check the address or ask the merchant for a new link.');
