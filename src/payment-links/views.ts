import { alertBox, formatAmount, html, messagePage, renderPage, type Html, type PageBrand } from '../pages/index.ts';
import type { LinkSource } from './schema.ts';
import type { PlanOffer } from '../installments/offer.ts';
import { agreementBox, planChoices, type PlanChoiceState } from '../installments/views.ts';
import type { PaymentLinkRow } from './store.ts';

/** What the payer typed, and what was wrong with it, when the form comes back. */
export interface PayerForm {
  name?: string;
  email?: string;
  phone?: string;
  errors?: Partial<Record<'name' | 'email' | 'phone', string>>;
  message?: string | null;
  /** The plan chosen ('full' or an offer's key), the agreement box, and their problems. */
  plan?: PlanChoiceState;
}

/** The installment plans the page offers (none: the link offers none, or none fits its amount). */
export interface LinkOffers {
  offers: PlanOffer[];
  /** A test plan's interval in seconds (INSTALLMENT_TEST_INTERVAL_SECONDS): dates are shown with the time. */
  shortened: boolean;
}

/** The fields of a link its pages show (the key of the link page's bytes: src/payment-links/pages.ts). */
export const SHOWN_FIELDS = ['livemode', 'description', 'amount_cents', 'currency', 'collect_name', 'collect_email', 'collect_phone'] as const;
type Shown = Pick<PaymentLinkRow, (typeof SHOWN_FIELDS)[number]>;

const money = (l: Shown) => formatAmount(l.amount_cents, l.currency);
/**
 * The heading of the public page. The link's `name` is internal (the merchant's dashboard name,
 * spec 5.5) and never shown to payers: the description, else the business name, else "Payment".
 */
export const publicTitle = (l: Shown, brand: PageBrand): string => l.description ?? brand.business_name ?? 'Payment';
const testMode = (l: Shown) => (l.livemode ? '' : html`<span class="status off">Test mode</span>`);
/** The badges above the heading, on one line: test mode, and the state when it is not the usual one. */
const badges = (l: Shown, state?: string) =>
  l.livemode && !state ? html`` : html`<p class="merchant">${testMode(l)} ${state ? html`<span class="status off">${state}</span>` : ''}</p>`;

function summary(l: Shown, brand: PageBrand): Html {
  return html`${badges(l)}
<h1>${publicTitle(l, brand)}</h1>
<p class="amount">${money(l)}</p>`;
}

function field(id: 'name' | 'email' | 'phone', label: string, attrs: Html, form: PayerForm, opts: { required?: boolean; hint?: string } = {}): Html {
  const error = form.errors?.[id];
  const described = [opts.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
<label for="${id}">${label}</label>
${opts.hint ? html`<p class="hint" id="${id}-hint">${opts.hint}</p>` : ''}
<input id="${id}" name="${id}" ${attrs} value="${form[id] ?? ''}"${error ? html` aria-invalid="true"` : ''}${described ? html` aria-describedby="${described}"` : ''}${opts.required === false ? '' : ' required'}>
${error ? html`<p class="alert error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

/**
 * The page of a link that takes payments: what is paid, the fields it collects, one button. A link
 * offering installments shows "Pay in full" and each plan (every amount and date, and the
 * authorisation), the box to tick for a plan and, when the link does not collect the email, an
 * email field needed for a plan only.
 */
export function linkPage(l: Shown, brand: PageBrand, action: string, csrf: string, source: LinkSource, form: PayerForm = {}, plans: LinkOffers | null = null): string {
  const hasErrors = (form.errors && Object.keys(form.errors).length > 0) || (form.plan?.errors && Object.keys(form.plan.errors).length > 0);
  const offering = plans && plans.offers.length > 0;
  const emailForPlan = offering && !l.collect_email;
  const body = html`<div class="card">
${summary(l, brand)}
${alertBox('error', form.message ?? (hasErrors ? 'Please check the highlighted fields.' : null))}
<form method="post" action="${action}" novalidate>
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="src" value="${source}">
${offering ? planChoices(plans.offers, l.currency, `${money(l)} today`, form.plan ?? {}, plans.shortened) : ''}
${l.collect_name ? field('name', 'Name', html`type="text" autocomplete="name" maxlength="200"`, form) : ''}
${l.collect_email ? field('email', 'Email', html`type="email" autocomplete="email" maxlength="254"`, form) : ''}
${emailForPlan ? field('email', 'Email (for a payment plan)', html`type="email" autocomplete="email" maxlength="254"`, form, { required: false, hint: 'Needed only for a payment plan: its notices are sent there.' }) : ''}
${l.collect_phone ? field('phone', 'Phone', html`type="tel" autocomplete="tel" maxlength="32"`, form) : ''}
${offering ? agreementBox(form.plan ?? {}) : ''}
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
