import type { Logger } from 'pino';
import { sessionUrl } from '../checkout/presenter.ts';
import { createSetupSession } from '../checkout/service.ts';
import type { CardSetupRow, SessionRow } from '../checkout/store.ts';
import { findCustomer, insertCustomer, type CustomerRow } from '../customers/store.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import { schedule, type PlanChoice } from '../lib/installments.ts';
import { ownerOf, type Owner } from '../lib/owner.ts';
import { isHttpUrl, mergeMetadata } from '../lib/validate.ts';
import type { PaymentRow } from '../payments/store.ts';
import { processorFor } from '../processor/select.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { ensureChargeJob, removeChargeJobs } from './jobs.ts';
import { presentPlan } from './presenter.ts';
import type { ListInstallmentPlans, UpdateInstallmentPlan } from './schema.ts';
import * as store from './store.ts';
import type { PlanRow, PlanWithParts } from './store.ts';

/** "Ada Lovelace" as a customer's first and last name (the name on the card, else the one typed on the link page). */
function names(full: string | null | undefined): { first: string; last: string } {
  const words = (full ?? '').trim().split(/\s+/).filter(Boolean);
  return { first: words[0] ?? '', last: words.slice(1).join(' ') };
}

/**
 * The plan's customer: the session's (an invoice's, the customer a link is attached to) while it
 * exists, else a new customer made for the payer from the email and name they typed, as Stripe
 * Checkout does. What a payer types on a public page never selects an existing customer (issue 21):
 * an email found among the customers would put a stranger's plan, card and payments into that
 * customer's records, and its notices would speak to them. Asked before the first part is marked
 * SUCCEEDED (the participant's customerOf), so that payment and its session carry it, and again
 * by createPlanFromFirstPart, which then finds it on the session.
 */
async function planCustomerOf(tx: Tx, session: SessionRow, payment: PaymentRow, choice: PlanChoice): Promise<CustomerRow> {
  const o = ownerOf(session);
  const attached = session.customer_id ? await findCustomer(tx.sql, o, session.customer_id) : undefined;
  if (attached) return attached;
  const name = names(payment.billing_name ?? session.metadata.payer_name);
  return insertCustomer(tx.sql, o, { email: choice.email, first_name: name.first, last_name: name.last });
}

export async function customerOfPlan(tx: Tx, session: SessionRow, payment: PaymentRow, choice: PlanChoice): Promise<string> {
  return (await planCustomerOf(tx, session, payment, choice)).id;
}

/**
 * Creates the plan chosen on the page, ACTIVE, in the transaction that records the success of its
 * first part (the installments participant's afterSuccess): its customer (planCustomerOf), whose
 * email on file receives the plan's notices, the parts with their amounts and dates counted from this payment, the first one
 * PAID by it, and `installment_plan.created`. Each later part's charge job is enqueued after commit.
 * A first part that is declined or abandoned never gets here: it leaves no plan.
 */
export async function createPlanFromFirstPart(tx: Tx, s: Services, session: SessionRow, payment: PaymentRow, choice: PlanChoice): Promise<PlanWithParts> {
  const o = ownerOf(session);
  const customer = await planCustomerOf(tx, session, payment, choice);
  // Test mode may shorten the calendar (INSTALLMENT_TEST_*); a live plan never is, whatever the session says.
  const testInterval = session.livemode ? null : choice.test_interval_seconds;
  const testRetry = session.livemode ? null : choice.test_retry_seconds;
  const parts = schedule(choice.total_cents, choice, payment.succeeded_at ?? new Date(), testInterval);
  if (parts[0]!.amountCents !== payment.amount_cents) {
    s.log.error({ planId: choice.plan_id, paid: payment.amount_cents, first: parts[0]!.amountCents }, 'the first part paid differs from the plan\'s first part');
  }
  const created = await store.insertPlan(
    tx.sql,
    o,
    {
      id: choice.plan_id,
      customer_id: customer.id,
      payment_link_id: session.payment_link_id,
      invoice_id: session.invoice_id,
      checkout_session_id: session.id,
      currency: session.currency,
      total_cents: choice.total_cents,
      count: choice.count,
      interval: choice.interval,
      test_interval_seconds: testInterval,
      test_retry_seconds: testRetry,
      // Where the notices go: the customer's email on file, never the one typed on the page (which
      // differs on a link attached to a customer or an invoice's plan); read again at each notice.
      email: customer.email,
      description: session.description,
      processor_payment_method: payment.processor_payment_method,
      card_brand: payment.card_brand,
      card_last4: payment.card_last4,
      agreement_text: choice.agreement.text,
      agreed_at: new Date(choice.agreement.agreed_at),
      agreement_ip: choice.agreement.ip,
      metadata: {},
    },
    parts.map((p) => ({ number: p.number, amount_cents: p.amountCents, due_at: p.dueAt })),
    payment.id,
  );
  if (!payment.processor_payment_method) {
    s.log.error({ planId: choice.plan_id, paymentId: payment.id }, 'the processor kept no card for the plan: its later parts will be declined until the card is updated');
  }
  await recordEvent(tx, s, o.accountId, 'installment_plan.created', presentPlan(created.plan, created.parts));
  // One delayed job per later part, at its date (a 24-part plan holds 23 small jobs in Redis).
  const later = created.parts.slice(1);
  tx.afterCommit(() => Promise.all(later.map((p) => ensureChargeJob(s, created.plan.id, p.number, 1, p.due_at))));
  return created;
}

export async function getPlan(s: Services, o: Owner, id: string): Promise<PlanWithParts> {
  const plan = await store.findPlan(s.sql, o, id);
  if (!plan) throw resourceMissing('installment_plan', id);
  return { plan, parts: await store.partsOf(s.sql, plan.id) };
}

export async function listPlans(s: Services, o: Owner, q: ListInstallmentPlans): Promise<PlanWithParts[]> {
  const plans = await store.listPlans(s.sql, o, q);
  const parts = await store.partsOfPlans(s.sql, plans.map((p) => p.id));
  return plans.map((plan) => ({ plan, parts: parts.get(plan.id) ?? [] }));
}

/**
 * PATCH /v1/installment-plans/:id: metadata merged key by key (null or "" removes a key, null for
 * the whole object removes them all), in any status; no event, as for a customer or a link.
 */
export async function updatePlan(s: Services, o: Owner, id: string, input: UpdateInstallmentPlan, log: Logger): Promise<PlanWithParts> {
  return withTx(s, log, async (tx) => {
    const plan = await store.lockPlan(tx.sql, o, id);
    if (!plan) throw resourceMissing('installment_plan', id);
    const metadata = mergeMetadata(plan.metadata, input.metadata);
    const row = JSON.stringify(metadata) === JSON.stringify(plan.metadata) ? plan : await store.setPlanMetadata(tx.sql, plan.id, metadata);
    return { plan: row, parts: await store.partsOf(tx.sql, plan.id) };
  });
}

/**
 * POST /v1/installment-plans/:id/cancel: an ACTIVE plan becomes CANCELLED with its unpaid parts
 * (SCHEDULED, RETRYING), `installment_plan.cancelled`, and their charge jobs removed after commit.
 * Refused while a part's charge is with the processor (its outcome decides first: try again in a
 * moment), as an invoice's void is.
 */
export async function cancelPlan(s: Services, o: Owner, id: string, log: Logger): Promise<PlanWithParts> {
  return withTx(s, log, async (tx) => {
    const plan = await store.lockPlan(tx.sql, o, id);
    if (!plan) throw resourceMissing('installment_plan', id);
    if (plan.status !== 'ACTIVE') throw new ApiError('resource_invalid_state', `Only an ACTIVE installment plan can be cancelled; this one is ${plan.status}.`);
    if (await store.chargeInFlight(tx.sql, plan.id)) {
      throw new ApiError('resource_invalid_state', 'A payment of this plan is in progress: it can be cancelled once the processor has answered. Try again in a minute.');
    }
    const cancelled = await store.cancelOpenParts(tx.sql, plan.id);
    const row = await store.setPlanStatus(tx.sql, plan.id, 'CANCELLED');
    const parts = await store.partsOf(tx.sql, plan.id);
    await recordEvent(tx, s, o.accountId, 'installment_plan.cancelled', presentPlan(row, parts));
    tx.afterCommit(() => removeChargeJobs(s, cancelled));
    return { plan: row, parts };
  });
}

/**
 * The customer replaces the card of an ACTIVE plan (issue 16, point 7: the portal's button calls
 * this). Opens a setup session of the hosted checkout for the plan's customer: it collects a new
 * card (3-D Secure included) without charging anything (`payment_status: no_payment_required`),
 * and once the processor saved it, the installments participant (afterSetup) makes it the plan's
 * card and brings a RETRYING part's next charge forward to now. `returnUrl`: where the payer goes
 * after (saved or cancelled). Answers the session and the page to send the payer to.
 * Refused: a plan of another owner (404), a plan that is not ACTIVE, a mode whose processor takes
 * cards in the browser (Stripe's Payment Element has no setup page yet: docs/decisions.md).
 */
export async function startCardUpdate(s: Services, owner: Owner, planId: string, returnUrl: string): Promise<{ session: SessionRow; url: string }> {
  const plan = await store.findPlan(s.sql, owner, planId);
  if (!plan) throw resourceMissing('installment_plan', planId);
  if (plan.status !== 'ACTIVE') throw new ApiError('resource_invalid_state', `Only the card of an ACTIVE installment plan can be replaced; this one is ${plan.status}.`);
  if (returnUrl.length > 2048 || !isHttpUrl(returnUrl)) throw invalidParam('return_url', 'return_url must be an absolute http or https URL of at most 2048 characters.');
  const processor = processorFor(s, plan.livemode);
  if (!processor) throw new ApiError('processor_unavailable', 'This merchant cannot take live payments: no live processor is configured.');
  if (processor.collectsCard !== 'server') {
    throw new ApiError('resource_invalid_state', 'Replacing the saved card of a plan is not available with the Stripe processor yet.');
  }
  const session = await createSetupSession(s, owner, {
    currency: plan.currency,
    returnUrl,
    customerId: plan.customer_id,
    customerEmail: plan.email,
    description: `New card for your payment plan${plan.description ? `: ${plan.description}` : ''}`,
    installment: { kind: 'card_update', plan_id: plan.id },
  });
  return { session, url: sessionUrl(s.config.checkoutUrl, session.id) };
}

/**
 * A setup session of a card update completed (the installments participant's afterSetup): the saved
 * card becomes the plan's, and a RETRYING part is due now, its charge job brought forward after
 * commit. A plan no longer ACTIVE keeps its card: the new one is used by nothing.
 */
export async function applyNewCard(tx: Tx, s: Services, session: SessionRow, setup: CardSetupRow, planId: string): Promise<PlanRow | null> {
  const plan = await store.lockPlan(tx.sql, ownerOf(session), planId);
  if (!plan || plan.status !== 'ACTIVE' || !setup.processor_payment_method) {
    s.log.warn({ planId, setupId: setup.id, status: plan?.status }, 'a card was saved for a plan that is no longer active: not used');
    return null;
  }
  const row = await store.setPlanCard(tx.sql, plan.id, { paymentMethod: setup.processor_payment_method, brand: setup.card_brand, last4: setup.card_last4 });
  const now = new Date();
  for (const part of await store.partsOf(tx.sql, plan.id)) {
    if (part.status !== 'RETRYING') continue;
    await store.updatePart(tx.sql, plan.id, part.number, { next_attempt_at: now });
    tx.afterCommit(() => ensureChargeJob(s, plan.id, part.number, part.attempt_count + 1, now));
  }
  return row;
}
