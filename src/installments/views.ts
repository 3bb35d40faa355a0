import { formatAmount, html, type Html } from '../pages/index.ts';
import { dueText, type PlanFormErrors, type PlanOffer } from './offer.ts';
import type { PartRow, PlanRow } from './store.ts';

/**
 * The payer-facing pieces of installment plans, shared by the link page and the hosted invoice
 * page: the choice between paying in full and each plan (every amount and date shown, with the
 * authorisation of that plan), the box to tick, and an invoice's plan under way. No script: the
 * radio buttons and the box are plain form fields, checked again on the server.
 */

export interface PlanChoiceState {
  /** The radio button chosen ('full' by default). */
  plan?: string;
  agree?: boolean;
  errors?: PlanFormErrors;
}

/** The schedule of an offer: "$33.34 today", then "$33.33 on April 5, 2027" … */
function scheduleList(offer: PlanOffer, currency: string, shortened: boolean, id: string): Html {
  return html`<ol class="schedule" id="${id}">${offer.parts.map(
    (p) => html`<li><span>${p.number === 1 ? 'Today' : dueText(p.dueAt, shortened)}</span><span class="num">${formatAmount(p.amountCents, currency)}</span></li>`,
  )}</ol>`;
}

/**
 * "How would you like to pay?": paying in full (`fullLabel`, e.g. "$100.00 today"), then each plan
 * with its schedule and, under it, the authorisation that ticking the box below gives for it.
 */
export function planChoices(offers: readonly PlanOffer[], currency: string, fullLabel: string, state: PlanChoiceState, shortened: boolean): Html {
  const chosen = state.plan && offers.some((o) => o.key === state.plan) ? state.plan : 'full';
  const planError = state.errors?.plan;
  return html`<fieldset class="choices"${planError ? html` aria-describedby="plan-error"` : ''}>
<legend>How would you like to pay?</legend>
<label class="choice"><input type="radio" name="plan" value="full"${chosen === 'full' ? ' checked' : ''}>
<span class="choice-body"><strong>Pay in full</strong><span class="muted">${fullLabel}</span></span></label>
${offers.map(
  (o) => html`<label class="choice"><input type="radio" name="plan" value="${o.key}"${chosen === o.key ? ' checked' : ''} aria-describedby="plan-${o.key}-schedule plan-${o.key}-terms">
<span class="choice-body"><strong>${o.title}</strong>
${scheduleList(o, currency, shortened, `plan-${o.key}-schedule`)}
<small id="plan-${o.key}-terms">${o.agreement}</small></span></label>`,
)}
${planError ? html`<p class="field-error" id="plan-error">${planError}</p>` : ''}
</fieldset>`;
}

/** The box a payer ticks to agree to the plan chosen above (required for a plan; the full payment needs none). */
export function agreementBox(state: PlanChoiceState): Html {
  const error = state.errors?.agree;
  return html`<div class="field">
<label class="check"><input type="checkbox" name="agree" value="yes"${state.agree ? ' checked' : ''}${error ? html` aria-invalid="true" aria-describedby="agree-error"` : ''}>
<span>If I chose a payment plan, I agree to its authorisation shown above: my card is kept and charged on those dates.</span></label>
${error ? html`<p class="field-error" id="agree-error">${error}</p>` : ''}
</div>`;
}

/** An invoice being paid in installments: what is paid, and what comes next (the hosted invoice page). */
export function planProgress(plan: PlanRow, parts: readonly PartRow[]): Html {
  const money = (n: number) => formatAmount(n, plan.currency);
  const shortened = plan.test_interval_seconds !== null;
  const paid = parts.filter((p) => p.status === 'PAID');
  const next = parts.find((p) => p.status === 'SCHEDULED' || p.status === 'RETRYING');
  const state = (p: PartRow) =>
    p.status === 'PAID' ? 'Paid' : p.status === 'RETRYING' ? 'Retrying' : p.status === 'FAILED' ? 'Failed' : p.status === 'CANCELLED' ? 'Cancelled' : 'Scheduled';
  return html`<div class="alert info" role="status">This invoice is being paid in ${plan.count} installments: ${paid.length} of ${plan.count} paid${
    next ? `; the next, ${money(next.amount_cents)}, is charged ${next.next_attempt_at ? `on ${dueText(next.next_attempt_at, shortened)}` : 'soon'}` : ''
  }.</div>
<table class="items parts">
<caption class="sr-only">Installments</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Due</th><th scope="col">Status</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${parts.map(
    (p) => html`<tr><td>${p.number} of ${plan.count}</td><td>${dueText(p.due_at, shortened)}</td><td>${state(p)}</td><td class="num">${money(p.amount_cents)}</td></tr>`,
  )}</tbody>
</table>`;
}
