import { ApiError } from '../../lib/errors.ts';
import { html } from '../../pages/html.ts';
import { CreatePaymentLink, UpdatePaymentLink } from '../../payment-links/schema.ts';
import type { PaymentLinkRow } from '../../payment-links/store.ts';
import { validate } from '../../lib/validate.ts';
import type { ShellPage } from '../layout.ts';
import { amountText, checked, metadataPatch, metadataText, orNull, parseAmount, parseMetadata, parseUtcDateTime, utcDateTimeText } from '../forms.ts';
import { alertBox, card, checkbox, formError, input, select, type FormState, type Forms } from '../widgets.ts';

/**
 * The form of a payment link, and reading it into the API's create and update inputs: the
 * result goes through CreatePaymentLink / UpdatePaymentLink and the links service, as a request does.
 */

const BASE = '/dashboard/payment-links';

export const LINK_FIELDS = [
  'amount', 'currency', 'type', 'name', 'description', 'slug', 'customer_id',
  'collect_name', 'collect_email', 'collect_phone', 'installment_enabled', 'quantity_limit', 'expires_at', 'metadata',
] as const;
type Field = (typeof LINK_FIELDS)[number];

/** Suggested in the currency field; any other ISO 4217 code may be typed. */
const COMMON_CURRENCIES = ['usd', 'eur', 'gbp', 'cad', 'aud', 'chf', 'jpy', 'inr', 'brl', 'mxn', 'sek', 'nok', 'dkk', 'pln', 'zar', 'sgd', 'hkd', 'nzd'];

/** The form of a link as it is stored. */
export function linkValues(l: PaymentLinkRow): Record<Field, string> {
  const on = (b: boolean) => (b ? 'on' : '');
  return {
    amount: amountText(l.amount_cents, l.currency),
    currency: l.currency,
    type: l.type,
    name: l.name ?? '',
    description: l.description ?? '',
    slug: l.slug ?? '',
    customer_id: l.customer_id ?? '',
    collect_name: on(l.collect_name),
    collect_email: on(l.collect_email),
    collect_phone: on(l.collect_phone),
    installment_enabled: on(l.installment_enabled),
    quantity_limit: l.quantity_limit === null ? '' : String(l.quantity_limit),
    expires_at: utcDateTimeText(l.expires_at),
    metadata: metadataText(l.metadata),
  };
}

const currencyOf = (v: Record<string, string>) => (v.currency ?? '').trim().toLowerCase();

/** A whole number typed, or null for an empty field; the schema then checks its range. */
function wholeNumber(text: string | undefined, param: string): number | null {
  const t = (text ?? '').trim();
  if (!t) return null;
  if (!/^\d{1,12}$/.test(t)) throw new ApiError('parameter_invalid', `Invalid ${param}: enter a whole number, or leave it empty.`, param);
  return Number(t);
}

/** Each field of the form as the API takes it. */
const readers: Record<Field, (v: Record<string, string>) => unknown> = {
  amount: (v) => parseAmount(v.amount, currencyOf(v)),
  currency: currencyOf,
  type: (v) => v.type ?? '',
  name: (v) => orNull(v.name),
  description: (v) => orNull(v.description),
  slug: (v) => orNull(v.slug),
  customer_id: (v) => orNull(v.customer_id),
  collect_name: (v) => checked(v.collect_name),
  collect_email: (v) => checked(v.collect_email),
  collect_phone: (v) => checked(v.collect_phone),
  installment_enabled: (v) => checked(v.installment_enabled),
  quantity_limit: (v) => wholeNumber(v.quantity_limit, 'quantity_limit'),
  expires_at: (v) => parseUtcDateTime(v.expires_at, 'expires_at'),
  metadata: (v) => parseMetadata(v.metadata),
};

/** The currency first: the amount is read in its units, so a bad one is named before the amount. */
const checkCurrency = (v: Record<string, string>) => validate(CreatePaymentLink.pick({ currency: true }), { currency: currencyOf(v) });

/** POST /v1/payment-links's input from the form: the fields left empty are left out. */
export function createInput(v: Record<string, string>): CreatePaymentLink {
  checkCurrency(v);
  const input: Record<string, unknown> = {};
  for (const f of LINK_FIELDS) {
    const value = readers[f](v);
    if (value !== null && value !== '' && !(f === 'metadata' && Object.keys(value as object).length === 0)) input[f] = value;
  }
  return validate(CreatePaymentLink, input);
}

/**
 * PATCH /v1/payment-links/:id's input: only the fields whose text differs from the link's own
 * form, so that a field that may no longer change (amount once paid) is not sent unless edited.
 */
export function updateInput(cur: PaymentLinkRow, v: Record<string, string>): UpdatePaymentLink {
  const before = linkValues(cur);
  if (currencyOf(v) !== cur.currency) checkCurrency(v);
  const patch: Record<string, unknown> = {};
  for (const f of LINK_FIELDS) {
    const typed = (v[f] ?? '').trim();
    if (f === 'currency' ? typed.toLowerCase() === before.currency : typed === before[f].trim()) continue;
    if (f === 'metadata') {
      const change = metadataPatch(cur.metadata, parseMetadata(v.metadata));
      if (Object.keys(change).length) patch.metadata = change;
      continue;
    }
    patch[f] = readers[f](v);
  }
  // An amount typed under a new currency is read in that currency's units.
  if (patch.currency !== undefined && patch.amount === undefined) {
    const amount = readers.amount(v);
    if (amount !== cur.amount_cents) patch.amount = amount;
  }
  return validate(UpdatePaymentLink, patch);
}

/** The form of a new link, or of an existing one (`l`). */
export function linkForm(l: PaymentLinkRow | null, state: FormState, f: Forms): ShellPage {
  const action = l ? `${BASE}/${l.id}` : BASE;
  const back = l ? `${BASE}/${l.id}` : BASE;
  const title = l ? `Edit ${l.name ?? l.description ?? l.id}` : 'New payment link';
  return {
    section: 'payment-links',
    title,
    crumbs: l ? [['Payment links', BASE], [l.name ?? l.description ?? l.id, back]] : [['Payment links', BASE]],
    body: card(
      null,
      html`${formError(state, LINK_FIELDS)}${l && l.payment_count > 0 ? alertBox('info', 'This link has payments: its amount, currency and type can no longer change.') : ''}
<form method="post" action="${action}" novalidate>
${f.hidden()}
<div class="fields">
${input({ name: 'amount', label: 'Amount', hint: 'In the currency’s main unit, like 25.00.', state, required: true, attrs: html`inputmode="decimal" autocomplete="off"` })}
${input({ name: 'currency', label: 'Currency', hint: 'A three-letter ISO code: pick one or type any other.', state, required: true, attrs: html`list="currencies" autocomplete="off" maxlength="3"` })}
</div>
<datalist id="currencies">${COMMON_CURRENCIES.map((c) => html`<option value="${c}">${c.toUpperCase()}</option>`)}</datalist>
${select({
        name: 'type',
        label: 'Type',
        state,
        options: [
          { value: 'MULTI', label: 'Many payments (MULTI)' },
          { value: 'SINGLE', label: 'One payment (SINGLE)' },
        ],
      })}
${input({ name: 'name', label: 'Name', hint: 'Internal: shown in the dashboard only, never to payers.', state, attrs: html`maxlength="200"` })}
${input({ name: 'description', label: 'Description', hint: 'Shown to payers on the link’s page.', state, multiline: true, attrs: html`maxlength="1000"` })}
<div class="fields">
${input({ name: 'slug', label: 'Slug', hint: 'The end of the public URL: 3 to 64 lowercase letters, digits and hyphens. Empty: the link’s id.', state, attrs: html`autocomplete="off" maxlength="64"` })}
${input({ name: 'customer_id', label: 'Customer ID', hint: 'Optional: payments of this link belong to this customer.', state, attrs: html`autocomplete="off" placeholder="cus_…"` })}
</div>
<fieldset><legend>Ask the payer for</legend>
${checkbox('collect_name', 'Their name', state)}
${checkbox('collect_email', 'Their email', state)}
${checkbox('collect_phone', 'Their phone number', state)}
</fieldset>
${checkbox('installment_enabled', 'Allow installments', state)}
<div class="fields">
${input({ name: 'quantity_limit', label: 'Payment limit', hint: 'How many payments a MULTI link takes; empty for no limit.', type: 'number', state, attrs: html`min="1" step="1" inputmode="numeric"` })}
${input({ name: 'expires_at', label: 'Expires at (UTC)', hint: 'Optional: no payments after this time.', type: 'datetime-local', state })}
</div>
${input({ name: 'metadata', label: 'Metadata', hint: 'One key=value per line, up to 20.', state, multiline: true })}
<div class="form-actions"><button type="submit" class="primary">${l ? 'Save changes' : 'Create payment link'}</button><a href="${back}">Cancel</a></div>
</form>`,
    ),
  };
}
