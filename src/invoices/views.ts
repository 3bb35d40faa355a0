import { minorUnits } from '../lib/currency.ts';
import { alertBox, formatAmount, html, messagePage, renderPage, type Html, type PageBrand } from '../pages/index.ts';
import type { InvoiceRow } from './store.ts';
import type { PlanOffer } from '../installments/offer.ts';
import type { PartRow, PlanRow } from '../installments/store.ts';
import { agreementBox, planChoices, planProgress, type PlanChoiceState } from '../installments/views.ts';

/**
 * The hosted invoice page (server-rendered, no script, the shared layout and CSP of the other
 * hosted pages) and the parsing of its one typed field, the amount of a partial payment.
 */

/** The amount field as the payer typed it, and what is wrong with it, when the form comes back. */
export interface PayForm {
  amount?: string;
  error?: string | null;
  message?: string | null;
}

/** A payment that brought the payer back here (the checkout's success_url). */
export interface PaidNotice {
  /** COMPLETE: the amount it paid and its receipt; otherwise not recorded (yet). */
  amountCents: number | null;
  receiptUrl: string | null;
}

export interface InvoicePageView {
  inv: InvoiceRow;
  /** accounts.business_name; null until the merchant sets one. */
  merchant: string | null;
  /** The account's name, logo and colour, shown at the top (the response's CSP must allow them: allowBrand). */
  brand?: PageBrand;
  /** The page's own path (the form posts to `${path}/pay`, the PDF is `${path}/pdf`). */
  path: string;
  /** Null: no pay form (not payable, nothing due, or live payments off). */
  csrf: string | null;
  /** Why there is no pay form although the invoice is open (live payments off). */
  unavailable?: string | null;
  form?: PayForm;
  paid?: PaidNotice | null;
  /** The installment plans offered over the amount due (allow_installments), and the choice posted back. */
  plans?: { offers: PlanOffer[]; shortened: boolean; state: PlanChoiceState } | null;
  /** The plan paying the invoice now: its progress stands where the pay form would. */
  activePlan?: { plan: PlanRow; parts: PartRow[] } | null;
}

const DATE = new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' });
export const formatDate = (d: Date): string => DATE.format(d);

/** What the payer sees as the state of the invoice. */
export function statusLabel(inv: InvoiceRow, now = new Date()): string {
  switch (inv.status) {
    case 'PAID':
      return 'Paid';
    case 'VOID':
      return 'Void';
    case 'DRAFT':
      return 'Draft';
    case 'UNCOLLECTIBLE':
      return 'Past due';
    case 'OPEN':
      return inv.due_date && inv.due_date.getTime() < now.getTime() ? 'Overdue' : 'Open';
  }
}

/** The invoice's heading: "Invoice INV-0001" (an unnumbered draft never has a live page). */
export const invoiceTitle = (inv: InvoiceRow): string => (inv.number ? `Invoice ${inv.number}` : 'Invoice');

/** An amount in minor units as the payer types it in major units: 4000 usd is "40.00", 500 jpy is "500". */
export function toMajorUnits(cents: number, currency: string): string {
  const digits = minorUnits(currency);
  if (digits === 0) return String(cents);
  const s = String(cents).padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

/** The smallest and largest amount a payer may choose, in minor units. */
export function payableRange(inv: InvoiceRow): { min: number; max: number } {
  const max = inv.amount_due_cents;
  const min = Math.min(inv.minimum_payment_cents ?? 1, max);
  return { min, max };
}

const MAJOR = /^(\d+|\d{1,3}(?:,\d{3})+)(?:\.(\d*))?$|^\.(\d+)$/;

/**
 * The amount typed on the page, exactly (no floating point): a major-units string ("40", "40.5",
 * "1,250.00", ".50") to integer minor units, checked against the invoice. Answers the amount, or
 * the sentence that tells the payer what is wrong (naming the field).
 */
export function parsePayAmount(input: string, inv: InvoiceRow): { amount: number } | { error: string } {
  const money = (n: number) => formatAmount(n, inv.currency);
  const { min, max } = payableRange(inv);
  const range = min === max ? `exactly ${money(max)}` : `between ${money(min)} and ${money(max)}`;
  const typed = input.trim().replace(/^[$€£¥]\s*/, '');
  if (typed === '') return { error: `Enter the amount to pay, ${range}.` };
  const m = MAJOR.exec(typed);
  if (!m || typed.length > 32) return { error: `Enter the amount to pay as a number, like ${toMajorUnits(max, inv.currency)}.` };
  const whole = (m[1] ?? '0').replaceAll(',', '');
  const fraction = m[2] ?? m[3] ?? '';
  const digits = minorUnits(inv.currency);
  if (fraction.length > digits) {
    const code = inv.currency.toUpperCase();
    return {
      error: digits === 0
        ? `The amount to pay cannot have decimals in ${code}.`
        : `The amount to pay can have at most ${digits} decimal${digits === 1 ? '' : 's'} in ${code}.`,
    };
  }
  // Digits only from here: BigInt keeps it exact however long the input, then the bounds apply.
  const amount = BigInt(whole) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, '0') || '0');
  if (amount <= 0n) return { error: `The amount to pay must be more than zero: ${range}.` };
  if (amount > BigInt(max)) return { error: `The amount to pay cannot be more than the amount due, ${money(max)}.` };
  if (amount < BigInt(min)) return { error: `The amount to pay must be at least ${money(min)} (the minimum payment), or the full amount due, ${money(max)}.` };
  return { amount: Number(amount) };
}

function badges(inv: InvoiceRow): Html {
  const label = statusLabel(inv);
  const tone = inv.status === 'PAID' ? '' : inv.status === 'OPEN' && label === 'Open' ? ' off' : inv.status === 'VOID' ? ' off' : ' warn';
  return html`<p class="badges"><span class="status${tone}">${label}</span>${inv.livemode ? '' : html`<span class="status off">Test mode</span>`}</p>`;
}

function facts(inv: InvoiceRow): Html {
  const issued = inv.finalized_at ?? inv.sent_at;
  return html`<dl class="facts">
${inv.number ? html`<dt>Invoice number</dt><dd>${inv.number}</dd>` : ''}
<dt>Status</dt><dd>${statusLabel(inv)}</dd>
${issued ? html`<dt>Issued</dt><dd>${formatDate(issued)}</dd>` : ''}
${inv.due_date ? html`<dt>Due</dt><dd>${formatDate(inv.due_date)}</dd>` : ''}
${inv.paid_at && inv.status === 'PAID' ? html`<dt>Paid</dt><dd>${formatDate(inv.paid_at)}</dd>` : ''}
${inv.voided_at && inv.status === 'VOID' ? html`<dt>Voided</dt><dd>${formatDate(inv.voided_at)}</dd>` : ''}
</dl>`;
}

function items(inv: InvoiceRow): Html {
  const money = (n: number) => formatAmount(n, inv.currency);
  return html`<table class="items">
<caption class="sr-only">Items</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Unit</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${inv.line_items.map(
    (i) => html`<tr><td>${i.name}</td><td class="num">${i.quantity}</td><td class="num">${money(i.amount)}</td><td class="num">${money(i.amount * i.quantity)}</td></tr>`,
  )}</tbody>
<tfoot>
<tr><td colspan="3">Total</td><td class="num">${money(inv.total_cents)}</td></tr>
<tr><td colspan="3">Amount paid</td><td class="num">${money(inv.amount_paid_cents)}</td></tr>
<tr><td colspan="3">Amount due</td><td class="num">${inv.status === 'VOID' ? 'None (void)' : money(inv.amount_due_cents)}</td></tr>
</tfoot>
</table>`;
}

/** The pay form of an invoice that offers installment plans: pay in full (or a part, when allowed) now, or a plan. */
function planPayForm(v: InvoicePageView, csrf: string, plans: NonNullable<InvoicePageView['plans']>): Html {
  const { inv } = v;
  const form = v.form ?? {};
  const due = formatAmount(inv.amount_due_cents, inv.currency);
  const hasErrors = !!form.error || Object.keys(plans.state.errors ?? {}).length > 0;
  const { min, max } = payableRange(inv);
  return html`<form method="post" action="${v.path}/pay" novalidate>
<input type="hidden" name="_csrf" value="${csrf}">
${alertBox('error', form.message ?? (hasErrors ? 'Please check the highlighted fields.' : null))}
${planChoices(plans.offers, inv.currency, inv.allow_partial_payments ? 'The amount below, now' : `${due} now`, plans.state, plans.shortened)}
${inv.allow_partial_payments ? html`<div class="field">
<label for="amount">Amount to pay now (${inv.currency.toUpperCase()})</label>
<p class="hint" id="amount-hint">${min === max ? `The amount due, ${due}.` : `Any amount from ${formatAmount(min, inv.currency)} to ${due}, when paying now.`}</p>
<input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" maxlength="32" value="${form.amount ?? toMajorUnits(max, inv.currency)}" aria-describedby="amount-hint${form.error ? ' amount-error' : ''}"${form.error ? html` aria-invalid="true"` : ''}>
${form.error ? html`<p class="field-error" id="amount-error">${form.error}</p>` : ''}
</div>` : ''}
${agreementBox(plans.state)}
<button type="submit" class="btn">Continue to payment</button>
</form>`;
}

function payForm(v: InvoicePageView, csrf: string): Html {
  const { inv } = v;
  const money = (n: number) => formatAmount(n, inv.currency);
  const form = v.form ?? {};
  const due = money(inv.amount_due_cents);
  if (v.plans && v.plans.offers.length > 0) return planPayForm(v, csrf, v.plans);
  if (!inv.allow_partial_payments) {
    return html`<form method="post" action="${v.path}/pay">
<input type="hidden" name="_csrf" value="${csrf}">
${alertBox('error', form.message ?? form.error)}
<button type="submit" class="btn">Pay ${due}</button>
</form>`;
  }
  const { min, max } = payableRange(inv);
  const hint = min === max ? `The amount due, ${due}.` : `Any amount from ${money(min)} to ${due}.`;
  const described = ['amount-hint', form.error ? 'amount-error' : ''].filter(Boolean).join(' ');
  return html`<form method="post" action="${v.path}/pay" novalidate>
<input type="hidden" name="_csrf" value="${csrf}">
${alertBox('error', form.message ?? (form.error ? 'Please check the amount to pay.' : null))}
<div class="field">
<label for="amount">Amount to pay (${inv.currency.toUpperCase()})</label>
<p class="hint" id="amount-hint">${hint}</p>
<input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" maxlength="32" value="${form.amount ?? toMajorUnits(max, inv.currency)}" aria-describedby="${described}"${form.error ? html` aria-invalid="true"` : ''} required>
${form.error ? html`<p class="field-error" id="amount-error">${form.error}</p>` : ''}
</div>
<button type="submit" class="btn">Pay</button>
</form>`;
}

function paidNotice(v: InvoicePageView): Html {
  const { inv, paid } = v;
  if (!paid) return html``;
  if (paid.amountCents === null) {
    return alertBox('info', 'We have not received this payment yet. If you completed it, reload this page in a minute.');
  }
  const amount = formatAmount(paid.amountCents, inv.currency);
  const message =
    inv.amount_due_cents === 0
      ? `Payment of ${amount} received. Thank you! This invoice is now paid in full.`
      : `Payment of ${amount} received. Thank you! The amount due is now ${formatAmount(inv.amount_due_cents, inv.currency)}.`;
  return html`${alertBox('success', message)}${paid.receiptUrl ? html`<p><a href="${paid.receiptUrl}">View the receipt of this payment</a></p>` : ''}`;
}

/** What stands where the pay form would: the reason nothing can be paid. */
function noForm(v: InvoicePageView): Html {
  const { inv } = v;
  if (v.activePlan && inv.status !== 'PAID' && inv.status !== 'VOID') return planProgress(v.activePlan.plan, v.activePlan.parts);
  if (inv.status === 'PAID') return alertBox('success', `This invoice is paid.${inv.paid_at ? ` Paid on ${formatDate(inv.paid_at)}.` : ''} Nothing is due.`);
  if (inv.status === 'VOID') return alertBox('info', 'This invoice was voided. Nothing is due and it cannot be paid.');
  if (v.unavailable) return alertBox('info', v.unavailable);
  return html``;
}

/** The hosted invoice page: the merchant, number, state, dates, items, amounts, the PDF and, while something is due, the pay form. */
export function invoicePage(v: InvoicePageView): string {
  const { inv } = v;
  const money = (n: number) => formatAmount(n, inv.currency);
  const due = inv.status === 'PAID' || inv.status === 'VOID' ? null : inv.amount_due_cents;
  const body = html`<div class="card">
${badges(inv)}
${v.merchant && !v.brand ? html`<p class="merchant">${v.merchant}</p>` : ''}
<h1>${invoiceTitle(inv)}</h1>
${paidNotice(v)}
${due !== null ? html`<p class="muted">Amount due</p><p class="amount">${money(due)}</p>` : html`<p class="muted">Total</p><p class="amount">${money(inv.total_cents)}</p>`}
${inv.description ? html`<p class="description">${inv.description}</p>` : ''}
${facts(inv)}
${items(inv)}
<div class="stack">
${v.csrf && due ? payForm(v, v.csrf) : noForm(v)}
<a class="btn secondary" href="${v.path}/pdf" download>Download PDF</a>
</div>
${!inv.livemode && v.csrf ? html`<p class="muted">Test mode: no real money moves. The next page takes the test card 4242 4242 4242 4242.</p>` : ''}
</div>`;
  return renderPage({ title: `${invoiceTitle(inv)}${v.merchant ? ` from ${v.merchant}` : ''}: ${statusLabel(inv)}`, body, brand: v.brand });
}

/** An invoice that takes no payment now (paid, void): the same page without a form, with the reason. */
export function refusedPage(v: InvoicePageView, message: string): string {
  return invoicePage({ ...v, csrf: null, unavailable: message });
}

export const notFoundPage = (): string =>
  messagePage('Invoice not found', 'This invoice does not exist or is not available. Check the address in your email or ask the merchant.');
