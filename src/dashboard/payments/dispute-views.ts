import { EVIDENCE_FIELDS, type EvidenceField } from '../../disputes/schema.ts';
import type { DisputeRow } from '../../disputes/store.ts';
import { html, type Html } from '../../pages/html.ts';
import { alertBox, card, facts, formError, input, money, statusBadge, when, type FormState, type Forms } from '../widgets.ts';

/** Labels of the evidence fields, in the order the form shows them (short ones first). */
const LABELS: Record<EvidenceField, string> = {
  customer_name: 'Customer name',
  customer_email_address: 'Customer email address',
  customer_purchase_ip: 'Customer purchase IP',
  billing_address: 'Billing address',
  shipping_address: 'Shipping address',
  shipping_carrier: 'Shipping carrier',
  shipping_tracking_number: 'Shipping tracking number',
  shipping_date: 'Shipping date',
  service_date: 'Service date',
  product_description: 'Product description',
  customer_communication: 'Customer communication',
  access_activity_log: 'Access activity log',
  cancellation_policy_disclosure: 'Cancellation policy disclosure',
  cancellation_rebuttal: 'Cancellation rebuttal',
  duplicate_charge_explanation: 'Duplicate charge explanation',
  refund_policy_disclosure: 'Refund policy disclosure',
  refund_refusal_explanation: 'Refund refusal explanation',
  uncategorized_text: 'Anything else',
};

export const EVIDENCE_KEYS = Object.keys(LABELS) as EvidenceField[];
/** A field longer than this is a textarea (the long explanations); the others are one line. */
const ONE_LINE_MAX = 500;
const isLong = (k: EvidenceField) => EVIDENCE_FIELDS[k] > ONE_LINE_MAX;

const REASONS: Record<string, string> = {
  fraudulent: 'Fraudulent: the cardholder says they did not make this payment',
  duplicate: 'Duplicate charge',
  product_not_received: 'Product not received',
  product_unacceptable: 'Product unacceptable',
  subscription_canceled: 'Subscription cancelled',
  credit_not_processed: 'Refund not processed',
  unrecognized: 'Unrecognised payment',
  general: 'General',
};
const reasonText = (r: string) => REASONS[r] ?? r.replaceAll('_', ' ');

/** The evidence of a dispute as its form shows it. */
export const evidenceValues = (d: DisputeRow): Record<string, string> =>
  Object.fromEntries(EVIDENCE_KEYS.map((k) => [k, d.evidence[k] ?? '']));

/** Each dispute of the payment, newest first: what it is, the evidence, and while it is open, the form. */
export function disputesCard(disputes: readonly DisputeRow[], f: Forms, path: string, posted: { disputeId: string; state: FormState } | null): Html {
  if (!disputes.length) return html``;
  return card(
    disputes.length === 1 ? 'Dispute' : 'Disputes',
    html`${disputes.map((d) => disputeBlock(d, f, path, posted?.disputeId === d.id ? posted.state : null))}`,
    html`id="disputes"`,
  );
}

function disputeBlock(d: DisputeRow, f: Forms, path: string, posted: FormState | null): Html {
  const open = d.status === 'NEEDS_RESPONSE' && !d.pending_action;
  const saved = EVIDENCE_KEYS.filter((k) => d.evidence[k]);
  return html`<article class="dispute" aria-labelledby="${d.id}-h">
<h3 id="${d.id}-h">${money(d.amount_cents, d.currency)} disputed ${statusBadge(d.status)}</h3>
${facts([
    ['Reason', reasonText(d.reason)],
    ['Amount', money(d.amount_cents, d.currency)],
    d.evidence_due_by ? ['Evidence due by', d.status === 'NEEDS_RESPONSE' ? html`<strong>${when(d.evidence_due_by)}</strong>` : when(d.evidence_due_by)] : null,
    ['Opened', when(d.created_at)],
    d.submitted_at ? ['Evidence submitted', when(d.submitted_at)] : null,
    d.closed_at ? ['Closed', when(d.closed_at)] : null,
    ['Dispute ID', html`<span class="mono">${d.id}</span>`],
  ])}
${statusNote(d)}
${!open && posted?.error ? alertBox('error', posted.error.message) : ''}
${open ? evidenceForm(d, f, path, posted) : savedEvidence(d, saved)}
</article>`;
}

function statusNote(d: DisputeRow): Html {
  const note = (text: string) => html`<p class="alert info">${text}</p>`;
  if (d.pending_action === 'submit') return note('The evidence is being sent to the card processor. This page shows the answer once it has come (reload to see it).');
  if (d.pending_action === 'close') return note('The dispute is being accepted at the card processor. This page shows it closed once it is (reload to see it).');
  switch (d.status) {
    case 'NEEDS_RESPONSE':
      return note(`The cardholder's bank took back ${money(d.amount_cents, d.currency)}. Send evidence that the payment was right before the due date, or accept the dispute. Save as you go: only "Submit evidence" sends it, once.`);
    case 'UNDER_REVIEW':
      return note('The evidence was sent. The card issuer is reviewing it; this page shows the decision once it is made.');
    case 'WON':
      return note(`The dispute was decided in your favour: the ${money(d.amount_cents, d.currency)} is yours.`);
    case 'LOST':
      return note(`The dispute was lost: the ${money(d.amount_cents, d.currency)} stays with the cardholder.`);
  }
}

function savedEvidence(d: DisputeRow, saved: EvidenceField[]): Html {
  if (!saved.length) return html`<p class="muted">No evidence was saved.</p>`;
  return html`<h4>Evidence</h4>${facts(saved.map((k) => [LABELS[k], html`<span class="pre">${d.evidence[k]}</span>`]))}`;
}

function evidenceForm(d: DisputeRow, f: Forms, path: string, posted: FormState | null): Html {
  const state: FormState = posted ?? { values: evidenceValues(d) };
  const field = (k: EvidenceField) =>
    input({
      name: k,
      id: `${d.id}-${k}`,
      label: LABELS[k],
      state,
      multiline: isLong(k),
      attrs: html`maxlength="${EVIDENCE_FIELDS[k]}"${isLong(k) ? '' : html` autocomplete="off"`}`,
      ...(k === 'uncategorized_text' && !f.livemode
        ? { hint: 'Test mode: “winning_evidence” here wins the dispute once submitted, “losing_evidence” loses it.' }
        : {}),
    });
  const saved = EVIDENCE_KEYS.filter((k) => d.evidence[k]).length;
  return html`<form class="evidence" method="post" action="${path}/disputes/${d.id}" novalidate aria-labelledby="${d.id}-ev">
<h4 id="${d.id}-ev">Evidence <span class="muted">(${saved ? `${saved} of ${EVIDENCE_KEYS.length} fields saved` : 'none saved yet'})</span></h4>
${formError(state, EVIDENCE_KEYS)}
${f.hidden()}
<fieldset><legend>Customer, shipping and dates</legend><div class="fields">${EVIDENCE_KEYS.filter((k) => !isLong(k)).map(field)}</div></fieldset>
<fieldset><legend>Explanations</legend>${EVIDENCE_KEYS.filter(isLong).map(field)}</fieldset>
<div class="form-actions"><button type="submit" name="intent" value="save" class="primary">Save evidence</button><button type="submit" name="intent" value="submit">Submit evidence</button><a class="btn danger" href="${path}?confirm=accept-dispute&amp;dispute=${d.id}">Accept the dispute</a></div>
<p class="hint">Submitting sends what is in this form to the card processor, once: after that the evidence can no longer be changed.</p>
</form>`;
}
