import type { Trial } from '../../fraud/service.ts';
import type { FraudListItemRow, FraudRuleRow } from '../../fraud/store.ts';
import { describeRule } from '../../fraud/evaluate.ts';
import { html, type Html } from '../../pages/html.ts';
import type { PaymentRow } from '../../payments/store.ts';
import type { ShellPage } from '../layout.ts';
import { badge, buttonForm, card, formError, input, money, select, table, when, type FormState, type Forms, type SelectOption } from '../widgets.ts';

export const FRAUD_PATH = '/dashboard/fraud';
/** How many condition rows the rule form offers (the API takes up to 10). */
export const CONDITION_ROWS = 3;

export const ATTRIBUTES: SelectOption[] = [
  { value: '', label: '(none)' },
  { value: 'amount_cents', label: 'Amount (cents)' },
  { value: 'currency', label: 'Currency' },
  { value: 'card_country', label: 'Card country' },
  { value: 'email_domain', label: 'Email domain' },
  { value: 'card_attempts', label: 'Attempts with the same card' },
  { value: 'client_ip_attempts', label: 'Attempts from the same address' },
];
const OPERATORS: SelectOption[] = [
  { value: 'gte', label: '≥ at least' },
  { value: 'gt', label: '> more than' },
  { value: 'lte', label: '≤ at most' },
  { value: 'lt', label: '< less than' },
  { value: 'eq', label: '= equal to' },
  { value: 'ne', label: '≠ not equal to' },
  { value: 'in', label: 'is one of' },
  { value: 'not_in', label: 'is none of' },
];
const ACTIONS: SelectOption[] = [
  { value: 'block', label: 'Block: decline before charging' },
  { value: 'review', label: 'Review: authorise and hold for a person' },
  { value: 'allow', label: 'Allow: skip block lists and rules' },
];
const KINDS: SelectOption[] = [
  { value: 'email', label: 'Email' },
  { value: 'card_fingerprint', label: 'Card fingerprint' },
  { value: 'card_country', label: 'Card country' },
  { value: 'client_ip', label: 'Client address or network' },
];
const KIND_LABEL = Object.fromEntries(KINDS.map((k) => [k.value, k.label]));
const TONE = { allow: 'good', block: 'bad', review: 'warn' } as const;
export const actionBadge = (a: 'allow' | 'block' | 'review'): Html => badge(a, TONE[a]);

/** The rule form's field names, so a problem named by the API shows beside its field. */
export const RULE_FIELDS = ['name', 'action', ...Array.from({ length: CONDITION_ROWS }, (_, i) => [`cond_${i}_attribute`, `cond_${i}_operator`, `cond_${i}_value`, `cond_${i}_window`]).flat()];

export interface FraudView {
  rules: FraudRuleRow[];
  items: FraudListItemRow[];
  reviews: PaymentRow[];
  rule: FormState;
  item: FormState;
  trial: Trial | null;
  notice: Html;
}

function conditionRow(i: number, state: FormState): Html {
  return html`<fieldset class="condition"><legend>Condition ${i + 1}${i === 0 ? '' : ' (optional)'}</legend>
${select({ name: `cond_${i}_attribute`, label: 'Attribute', state, options: ATTRIBUTES })}
${select({ name: `cond_${i}_operator`, label: 'Operator', state, options: OPERATORS })}
${input({ name: `cond_${i}_value`, label: 'Value', state, hint: 'A number (amount in cents, attempts), or codes separated by commas: usd, eur · NG, GH · example.com' })}
${input({ name: `cond_${i}_window`, label: 'Window in seconds (attempts only)', state, type: 'number', attrs: html`min="60" max="604800" inputmode="numeric"` })}
</fieldset>`;
}

function trialBox(t: Trial): Html {
  const verb = t.action === 'block' ? 'blocked' : t.action === 'review' ? 'held for review' : 'allowed';
  return html`<div class="alert info" role="status" id="trial"><strong>Would have ${verb} ${t.matched} ${t.matched === 1 ? 'payment' : 'payments'}</strong> of the ${t.evaluated} made since ${when(t.since)}${t.truncated ? ' (only the newest 20,000 were read)' : ''}: ${t.description}.${t.examples.length ? html` For example: ${t.examples.map((id, i) => html`${i ? ', ' : ''}<a class="mono" href="/dashboard/payments/${id}">${id}</a>`)}.` : ''}</div>`;
}

export function fraudPage(v: FraudView, f: Forms): ShellPage {
  return {
    section: 'fraud',
    title: 'Fraud rules',
    body: html`${v.notice}
${card(
  'Payments waiting for review',
  html`<p class="muted intro">Held by a review rule: the card is authorised, not charged. Approve to charge it, refuse to release it. A review not decided by its deadline is refused.</p>
${table<PaymentRow>(
    [
      { label: 'Payment', cell: (p) => html`<span class="mono">${p.id}</span>` },
      { label: 'Amount', cell: (p) => money(p.amount_cents, p.currency), num: true },
      { label: 'Email', cell: (p) => p.email ?? '—' },
      { label: 'Why', cell: (p) => p.fraud_reason ?? '—' },
      { label: 'Deadline', cell: (p) => when(p.review_deadline) },
    ],
    v.reviews,
    (p) => `/dashboard/payments/${p.id}`,
    'No payment is waiting for review.',
  )}`,
)}
${card(
  'Rules',
  html`<p class="muted intro">Evaluated on the hosted page before the card is charged. A matching allow rule wins; then the block list and block rules; then review rules.</p>
${table<FraudRuleRow>(
    [
      { label: 'Name', cell: (r) => r.name },
      { label: 'Action', cell: (r) => actionBadge(r.action) },
      { label: 'Conditions', cell: (r) => html`<span class="mono">${describeRule(r)}</span>` },
      { label: 'Status', cell: (r) => (r.enabled ? badge('enabled', 'good') : badge('disabled')) },
      {
        label: 'Actions',
        cell: (r) =>
          html`${buttonForm(`${FRAUD_PATH}/rules/${r.id}/${r.enabled ? 'disable' : 'enable'}`, f, `${r.enabled ? 'Disable' : 'Enable'} ${r.name}`, { small: true })} ${buttonForm(`${FRAUD_PATH}/rules/${r.id}/delete`, f, `Delete ${r.name}`, { small: true, kind: 'danger' })}`,
      },
    ],
    v.rules,
    null,
    'No rule yet.',
  )}`,
)}
${card(
  'New rule',
  html`${formError(v.rule, RULE_FIELDS)}${v.trial ? trialBox(v.trial) : ''}
<form method="post" action="${FRAUD_PATH}/rules">${f.hidden()}
${input({ name: 'name', label: 'Name', state: v.rule, required: true })}
${select({ name: 'action', label: 'Action', state: v.rule, options: ACTIONS })}
${Array.from({ length: CONDITION_ROWS }, (_, i) => conditionRow(i, v.rule))}
<div class="form-actions"><button type="submit" formaction="${FRAUD_PATH}/rules/try">Try against the last 30 days</button><button type="submit" class="primary">Create the rule</button></div>
</form>`,
)}
${card(
  'Block list',
  html`${table<FraudListItemRow>(
    [
      { label: 'Kind', cell: (i) => KIND_LABEL[i.kind] ?? i.kind },
      { label: 'Value', cell: (i) => html`<span class="mono">${i.value}</span>` },
      { label: 'Note', cell: (i) => i.note ?? '' },
      { label: 'Added', cell: (i) => when(i.created_at) },
      { label: 'Actions', cell: (i) => buttonForm(`${FRAUD_PATH}/lists/${i.id}/delete`, f, `Remove ${i.value}`, { small: true, kind: 'danger' }) },
    ],
    v.items,
    null,
    'The block list is empty.',
  )}
${formError(v.item, ['kind', 'value', 'note'])}
<form method="post" action="${FRAUD_PATH}/lists">${f.hidden()}
${select({ name: 'kind', label: 'Kind', state: v.item, options: KINDS })}
${input({ name: 'value', label: 'Value', state: v.item, required: true, hint: 'ada@example.com · a payment’s card fingerprint (fp_…) · NG · 203.0.113.7 or 203.0.113.0/24' })}
${input({ name: 'note', label: 'Note (optional)', state: v.item })}
<div class="form-actions"><button type="submit" class="primary">Add to the block list</button></div>
</form>`,
)}`,
  };
}

/** The fraud facts and the review panel on a payment's dashboard page. */
export function paymentFraudCard(p: PaymentRow, f: Forms, canDecide: boolean): Html {
  if (!p.fraud_action && !p.card_fingerprint && !p.review_status) return html``;
  const open = p.review_status === 'open';
  return card(
    'Fraud checks',
    html`<dl class="facts">
<dt>Decision</dt><dd>${p.fraud_action ? actionBadge(p.fraud_action) : 'no rule matched'}</dd>
${p.fraud_reason ? html`<dt>Why</dt><dd>${p.fraud_reason}${p.fraud_rule_id ? html` <span class="mono muted">(${p.fraud_rule_id})</span>` : ''}</dd>` : ''}
<dt>Card fingerprint</dt><dd class="mono">${p.card_fingerprint ?? '—'}</dd>
<dt>Card country</dt><dd>${p.card_country ?? '—'}</dd>
<dt>Client address</dt><dd class="mono">${p.client_ip ?? '—'}</dd>
${p.review_status ? html`<dt>Review</dt><dd>${p.review_status}${p.review_closed_by ? ` by ${p.review_closed_by}` : ''}${p.review_closed_at ? ` on ${when(p.review_closed_at)}` : ''}</dd>` : ''}
${open ? html`<dt>Review deadline</dt><dd>${when(p.review_deadline)} (refused then unless decided)</dd>` : ''}
</dl>
${open && canDecide ? html`<div class="form-actions">${buttonForm(`${FRAUD_PATH}/reviews/${p.id}/approve`, f, 'Approve and charge', { kind: 'primary' })} ${buttonForm(`${FRAUD_PATH}/reviews/${p.id}/refuse`, f, 'Refuse', { kind: 'danger' })}</div>` : ''}`,
    html`id="fraud"`,
  );
}
