import type { Logger } from 'pino';
import { issuePortalLink } from '../customers/portal-links.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { queueEmail } from '../email/outbox.ts';
import { installmentDefaultedEmail, installmentFailedEmail } from '../email/plan-templates.ts';
import { newId } from '../lib/ids.ts';
import { ownerOf } from '../lib/owner.ts';
import { presentPayment } from '../payments/presenter.ts';
import * as payments from '../payments/store.ts';
import type { PaymentRow } from '../payments/store.ts';
import { processorFor } from '../processor/select.ts';
import type { Processor, SavedCardCharge } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { ensureChargeJob, removeChargeJobs } from './jobs.ts';
import { presentPlan } from './presenter.ts';
import * as store from './store.ts';
import type { PartRow, PlanRow } from './store.ts';

/**
 * The later parts of an installment plan (docs/decisions.md, "Installments"): each charge is a
 * payment recorded, committed in flight, sent to the processor with nothing open, and recorded
 * (record → commit → call → record, as every payment). The plan's row lock, then the part's, and
 * the one-charge-in-flight-per-plan rule make a part charged at most once however many jobs or
 * workers ask; the processor's idempotency by our payment id covers a crash after the call.
 */

/**
 * The dunning schedule: a declined part is tried again 1, 3 and 5 days after its first failure
 * (steps of a day; of INSTALLMENT_TEST_RETRY_SECONDS on a test plan that has them). After the last
 * retry fails, the part is FAILED and the plan DEFAULTED.
 */
export const RETRY_OFFSETS = [1, 3, 5] as const;
const DAY_MS = 86_400_000;

/** How long the one-time portal link of a failure notice works: the whole dunning window and a little more. */
export const FAILURE_LINK_SECONDS = 7 * 24 * 3600;

/** How long a charge may stay in flight before the sweeper asks again (as checkout payments: longer than any call). */
export const SETTLE_CHARGES_AFTER_MS = 60_000;

/** A job may fire a little early (another host's clock): it waits up to this, else it is not due. */
const EARLY_WAIT_MS = 10_000;

export type ChargeOutcome =
  | { kind: 'paid'; payment: PaymentRow; completed: boolean }
  | { kind: 'retrying'; payment: PaymentRow; nextAttemptAt: Date }
  | { kind: 'defaulted'; payment: PaymentRow }
  /** Another charge of the plan is with the processor, or this one has no final answer yet. */
  | { kind: 'in_progress' }
  | { kind: 'not_due'; at: Date }
  /** The plan is not ACTIVE, the part is paid or ended, or the job is of an earlier attempt. */
  | { kind: 'ended' }
  | { kind: 'missing' }
  /** No processor for the mode (live payments off), or it did not answer before the charge: the part stays due. */
  | { kind: 'unavailable' };

interface Started {
  kind: 'started';
  plan: PlanRow;
  part: PartRow;
  payment: PaymentRow;
}

/** The processor's customer the saved card belongs to (Stripe keeps cards on one): made now when the sweep has not yet. */
async function processorCustomer(s: Services, processor: Processor, plan: PlanRow): Promise<string | null> {
  const customer = await store.planCustomer(s.sql, plan);
  if (!customer) return null;
  if (customer.processor_customer_id) return customer.processor_customer_id;
  const twin = await processor.createCustomer({ reference: customer.id, email: customer.email, name: customer.name, livemode: plan.livemode });
  return store.storeProcessorCustomer(s.sql, customer.id, twin.id);
}

/** What a later part's payment says of itself: what is paid, and which part. */
const partDescription = (plan: PlanRow, number: number) => `${plan.description ?? 'Payment'} (payment ${number} of ${plan.count})`;

/**
 * Charges part `number` of a plan if it is due (by `dueBy`, now unless advance-time looks ahead):
 * the charge job's handler, the repair pass's and advance-time's step. Idempotent: a part PAID,
 * not due, or with a charge of its plan in flight is left alone; `attempt` (the job's) must be the
 * part's next attempt, so a job of an earlier attempt does nothing.
 */
export async function chargePart(s: Services, planId: string, number: number, opts: { dueBy?: Date; attempt?: number; log?: Logger } = {}): Promise<ChargeOutcome> {
  const log = (opts.log ?? s.log).child({ planId, number, job: 'installment-charge' });
  const [peek] = await s.sql<PlanRow[]>`select * from installment_plans where id = ${planId}`;
  if (!peek) return { kind: 'missing' };
  if (peek.status !== 'ACTIVE') return { kind: 'ended' };
  const processor = processorFor(s, peek.livemode);
  if (!processor) return { kind: 'unavailable' };
  let customer: string | null;
  try {
    customer = await processorCustomer(s, processor, peek);
  } catch (err) {
    // Nothing recorded yet: the part stays due; the job is tried again, or the repair pass enqueues it.
    log.warn({ err }, 'processor unavailable before an installment charge; nothing charged');
    return { kind: 'unavailable' };
  }

  const started = await withTx(s, log, async (tx): Promise<ChargeOutcome | Started> => {
    const plan = await store.lockPlanById(tx.sql, planId);
    if (!plan) return { kind: 'missing' };
    if (plan.status !== 'ACTIVE') return { kind: 'ended' };
    const part = await store.lockPart(tx.sql, planId, number);
    if (!part || (part.status !== 'SCHEDULED' && part.status !== 'RETRYING') || !part.next_attempt_at) return { kind: 'ended' };
    if (opts.attempt !== undefined && opts.attempt !== part.attempt_count + 1) return { kind: 'ended' };
    const dueBy = opts.dueBy ?? new Date();
    if (part.next_attempt_at.getTime() > dueBy.getTime()) return { kind: 'not_due', at: part.next_attempt_at };
    // One charge of a plan at a time: read after the plan's lock, so it sees every charge committed before.
    if (await store.chargeInFlight(tx.sql, planId)) return { kind: 'in_progress' };
    const [first] = await tx.sql<Pick<PaymentRow, 'link_source' | 'billing_name'>[]>`
      select link_source, billing_name from payments where installment_plan_id = ${planId} and installment_number = 1 and status = 'SUCCEEDED' limit 1`;
    const payment = await payments.insertPayment(tx.sql, ownerOf(plan), {
      id: newId('pay'),
      amount_cents: part.amount_cents,
      currency: plan.currency,
      checkout_session_id: null,
      payment_intent_id: null,
      customer_id: plan.customer_id,
      email: await store.planRecipient(tx.sql, plan),
      billing_name: first?.billing_name ?? null,
      card_brand: plan.card_brand,
      card_last4: plan.card_last4,
      description: partDescription(plan, number),
      payment_link_id: plan.payment_link_id,
      link_source: first?.link_source ?? (plan.payment_link_id ? 'DIRECT' : null),
      invoice_id: plan.invoice_id,
      installment_plan_id: plan.id,
      installment_number: number,
      processor_payment_method: plan.processor_payment_method,
    });
    const updated = await store.updatePart(tx.sql, planId, number, { attempt_count: part.attempt_count + 1, payment_id: payment.id });
    return { kind: 'started', plan, part: updated, payment };
  });
  if (started.kind !== 'started') {
    if (started.kind === 'not_due' && started.at.getTime() - Date.now() <= EARLY_WAIT_MS && !opts.dueBy) {
      await new Promise((r) => setTimeout(r, Math.max(0, started.at.getTime() - Date.now())));
      return chargePart(s, planId, number, opts);
    }
    return started;
  }
  return callAndRecord(s, processor, customer, started.plan, started.payment, log, false);
}

/**
 * The processor call of a charge committed in flight, then transaction 2. A call that throws leaves
 * it in flight for the sweeper, which calls with `again` (the processor may have the charge already).
 */
async function callAndRecord(s: Services, processor: Processor, customer: string | null, plan: PlanRow, payment: PaymentRow, log: Logger, again: boolean): Promise<ChargeOutcome> {
  let answer: SavedCardCharge;
  try {
    answer = payment.processor_payment_method
      ? await processor.chargeSavedCard({
          reference: payment.id,
          again,
          customer,
          paymentMethod: payment.processor_payment_method,
          amount: payment.amount_cents,
          currency: payment.currency,
          livemode: payment.livemode,
          description: payment.description,
        })
      : { status: 'declined', code: 'card_declined', message: 'No card is saved for this plan.', intentId: null };
  } catch (err) {
    log.error({ err, paymentId: payment.id }, 'processor call failed; the installment charge stays in flight until the sweeper settles it');
    return { kind: 'in_progress' };
  }
  return recordCharge(s, plan.id, payment, answer, log);
}

/**
 * Transaction 2 of a charge: under the plan's and the part's locks, only a payment still in flight
 * changes (the job and the sweeper may both answer; the second changes nothing). Paid: the payment
 * SUCCEEDED with `payment.succeeded`, the part PAID, the participants' afterOffSessionSuccess (a
 * link's total, an invoice's amount due, the receipt) and, for the last part, the plan COMPLETED
 * with `installment_plan.completed`. Declined: `payment.failed` and the dunning (dunning()).
 */
export async function recordCharge(s: Services, planId: string, payment: PaymentRow, answer: SavedCardCharge, log: Logger): Promise<ChargeOutcome> {
  const o = ownerOf(payment);
  return withTx(s, log, async (tx): Promise<ChargeOutcome> => {
    const plan = await store.lockPlanById(tx.sql, planId);
    if (!plan) throw new Error(`installment plan ${planId} vanished`);
    const part = await store.lockPart(tx.sql, planId, payment.installment_number!);
    if (!part) throw new Error(`part ${payment.installment_number} of installment plan ${planId} vanished`);
    const current = await payments.lockInFlight(tx.sql, payment.id);
    if (!current) return { kind: 'ended' }; // recorded already, by the job or the sweeper
    if (answer.status === 'processing') return { kind: 'in_progress' };
    if (answer.status === 'succeeded') {
      const paid = await payments.markSucceeded(tx.sql, o, payment.id, answer.card ?? null, { intentId: answer.intentId });
      tx.afterCommit(() => s.metrics.paymentSucceeded(paid));
      await recordEvent(tx, s, o.accountId, 'payment.succeeded', presentPayment(paid, s.config.checkoutUrl));
      await store.updatePart(tx.sql, planId, part.number, { status: 'PAID', next_attempt_at: null, paid_at: new Date(), payment_id: paid.id });
      for (const participant of s.paymentParticipants) await participant.afterOffSessionSuccess?.(tx, paid);
      const parts = await store.partsOf(tx.sql, planId);
      const completed = plan.status === 'ACTIVE' && parts.every((p) => p.status === 'PAID');
      if (completed) {
        const row = await store.setPlanStatus(tx.sql, planId, 'COMPLETED');
        await recordEvent(tx, s, o.accountId, 'installment_plan.completed', presentPlan(row, parts));
      } else {
        await store.touchPlan(tx.sql, planId);
      }
      return { kind: 'paid', payment: paid, completed };
    }
    const code = answer.status === 'declined' ? answer.code : 'processing_error';
    const message = answer.status === 'declined' ? answer.message : 'The payment could not be completed and the card was not charged.';
    const failed = await payments.markFailed(tx.sql, o, payment.id, code, message, answer.intentId);
    await recordEvent(tx, s, o.accountId, 'payment.failed', presentPayment(failed, s.config.checkoutUrl));
    return dunning(tx, s, plan, part, failed, log);
  });
}

/** When retry `done + 1` of a part is due: its first failure plus the schedule's offset (never in the past). */
export function nextAttemptAt(plan: Pick<PlanRow, 'test_retry_seconds' | 'livemode'>, firstFailedAt: Date, retriesDone: number, now = new Date()): Date | null {
  if (retriesDone >= RETRY_OFFSETS.length) return null;
  const step = !plan.livemode && plan.test_retry_seconds ? plan.test_retry_seconds * 1000 : DAY_MS;
  return new Date(Math.max(now.getTime(), firstFailedAt.getTime() + RETRY_OFFSETS[retriesDone]! * step));
}

/**
 * A declined part: RETRYING at the next date of the schedule, with an `installment_failed` email
 * holding a one-time portal link to replace the card (where the portal can: not yet with Stripe),
 * and the retry's job after commit; or, after
 * the last retry, the part FAILED, the plan DEFAULTED with its other unpaid parts CANCELLED,
 * `installment_plan.defaulted` and an `installment_defaulted` email.
 */
async function dunning(tx: Tx, s: Services, plan: PlanRow, part: PartRow, payment: PaymentRow, log: Logger): Promise<ChargeOutcome> {
  const now = new Date();
  const firstFailedAt = part.first_failed_at ?? now;
  // attempt_count counts this attempt: the first charge and the retries made so far.
  const next = plan.status === 'ACTIVE' ? nextAttemptAt(plan, firstFailedAt, part.attempt_count - 1, now) : null;
  if (next) {
    await store.updatePart(tx.sql, plan.id, part.number, { status: 'RETRYING', next_attempt_at: next, first_failed_at: firstFailedAt });
    await store.touchPlan(tx.sql, plan.id);
    await failureNotice(tx, s, plan, part, payment, next, log);
    tx.afterCommit(() => ensureChargeJob(s, plan.id, part.number, part.attempt_count + 1, next));
    return { kind: 'retrying', payment, nextAttemptAt: next };
  }
  await store.updatePart(tx.sql, plan.id, part.number, { status: 'FAILED', next_attempt_at: null, first_failed_at: firstFailedAt });
  if (plan.status !== 'ACTIVE') return { kind: 'ended' };
  const cancelled = await store.cancelOpenParts(tx.sql, plan.id);
  const row = await store.setPlanStatus(tx.sql, plan.id, 'DEFAULTED');
  const parts = await store.partsOf(tx.sql, plan.id);
  await recordEvent(tx, s, plan.account_id, 'installment_plan.defaulted', presentPlan(row, parts));
  const paidCents = parts.filter((p) => p.status === 'PAID').reduce((sum, p) => sum + p.amount_cents, 0);
  await besides(tx, log, 'installment_defaulted', async (sp) => {
    await queueEmail(sp, s, ownerOf(plan), {
      to: await store.planRecipient(sp.sql, plan),
      template: 'installment_defaulted',
      relatedObject: plan.id,
      dedupeKey: `installment_defaulted:${plan.id}`,
      render: (m) =>
        installmentDefaultedEmail({
          merchantName: m.name,
          description: plan.description,
          number: part.number,
          count: plan.count,
          amountCents: part.amount_cents,
          currency: plan.currency,
          paidCents,
          totalCents: plan.total_cents,
          reason: payment.failure_message ?? 'Your card was declined.',
        }),
    });
  });
  tx.afterCommit(() => removeChargeJobs(s, cancelled));
  return { kind: 'defaulted', payment };
}

/** Work that must never undo the caller's (an email): in a savepoint, a failure logged and rolled back to it. */
async function besides(tx: Tx, log: Logger, what: string, work: (sp: Tx) => Promise<void>): Promise<void> {
  try {
    await tx.sql.savepoint((sp) => work({ sql: sp, afterCommit: (h) => tx.afterCommit(h) }));
  } catch (err) {
    log.error({ err, what }, 'could not queue an installment email; the charge is recorded without it');
  }
}

/**
 * The `installment_failed` email of a declined attempt, to the customer's email on file, with a
 * one-time link to their portal (valid FAILURE_LINK_SECONDS) where the card is replaced; the link
 * exists only if the email is written (same savepoint), and goes only to the email of the customer
 * it signs into. No link when the customer was deleted since (the email then goes to the address the
 * plan kept), or when the portal cannot replace the card (the Stripe processor: startCardUpdate);
 * the email then says to contact the merchant.
 */
async function failureNotice(tx: Tx, s: Services, plan: PlanRow, part: PartRow, payment: PaymentRow, next: Date, log: Logger): Promise<void> {
  const o = ownerOf(plan);
  await besides(tx, log, 'installment_failed', async (sp) => {
    const customer = await store.planCustomer(sp.sql, plan);
    const replaceable = processorFor(s, plan.livemode)?.collectsCard === 'server';
    const link = customer && replaceable ? await issuePortalLink(sp.sql, o, customer.id, s.config.publicBaseUrl, FAILURE_LINK_SECONDS) : null;
    await queueEmail(sp, s, o, {
      to: customer?.email ?? plan.email,
      template: 'installment_failed',
      relatedObject: plan.id,
      dedupeKey: `installment_failed:${payment.id}`,
      render: (m) =>
        installmentFailedEmail({
          merchantName: m.name,
          description: plan.description,
          number: part.number,
          count: plan.count,
          amountCents: part.amount_cents,
          currency: plan.currency,
          reason: payment.failure_message ?? 'Your card was declined.',
          card: plan.card_last4 ? { brand: plan.card_brand, last4: plan.card_last4 } : null,
          nextAttemptAt: next,
          portalUrl: link?.url ?? null,
          portalLinkExpiresAt: link?.expiresAt ?? null,
        }),
    });
  });
}

/**
 * The `installment-charges-in-flight` repair pass: charges left in flight over
 * SETTLE_CHARGES_AFTER_MS (a crash between transaction 1 and 2, a call that failed) are asked again
 * with the same reference: the processor answers the charge it made, or makes it now if it never
 * saw it (the part is due and its plan was agreed; cancel waits for it), and the answer is recorded.
 */
export async function settleStuckCharges(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'installment-charges-in-flight' });
  const stuck = await payments.stuckOffSession(s.sql, new Date(Date.now() - SETTLE_CHARGES_AFTER_MS), 200);
  let settled = 0;
  for (const p of stuck) {
    try {
      if (!p.installment_plan_id) continue;
      const plan = (await s.sql<PlanRow[]>`select * from installment_plans where id = ${p.installment_plan_id}`)[0];
      const processor = processorFor(s, p.livemode);
      if (!plan || !processor) continue;
      const customer = await processorCustomer(s, processor, plan);
      const outcome = await callAndRecord(s, processor, customer, plan, p, log, true);
      if (outcome.kind === 'in_progress') continue;
      settled++;
      log.warn({ paymentId: p.id, planId: plan.id, outcome: outcome.kind }, 'settled an installment charge left in flight');
    } catch (err) {
      log.error({ err, paymentId: p.id }, 'could not settle an installment charge left in flight');
    }
  }
  return settled;
}

/** How long past its time the repair pass leaves a part to its own job. */
export const DUE_GRACE_MS = 5_000;

/**
 * The `installments-due` repair pass: parts of ACTIVE plans due for over DUE_GRACE_MS get their
 * charge job again when it is missing (Redis flushed, an enqueue lost) or ended without charging
 * (ran early, failed for good); a job waiting or running is left alone. Postgres is the list.
 * Answers how many jobs it added or brought forward.
 */
export async function reconcileDueParts(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'installments-due' });
  const due = await store.dueParts(s.sql, new Date(Date.now() - DUE_GRACE_MS), 500);
  let enqueued = 0;
  for (const p of due) {
    try {
      if (await ensureChargeJob(s, p.plan_id, p.number, p.attempt_count + 1, p.next_attempt_at)) enqueued++;
    } catch (err) {
      log.error({ err, planId: p.plan_id, number: p.number }, 'could not enqueue a due installment; the next pass tries again');
    }
  }
  return enqueued;
}

/** How many charges one advance-time makes at most; `has_more` asks for another call. */
const ADVANCE_BATCH = 1000;

/**
 * The test helpers' advance-time (test mode, one account): every part due by `asOf`, retries
 * included, is charged now through chargePart, round after round, until none is due by then (a
 * declined part's retries come due in later rounds when they fall before `asOf`). Answers the
 * charges made and whether more were left.
 */
export async function chargeDueBy(s: Services, o: { accountId: string; livemode: boolean }, asOf: Date, log: Logger): Promise<{ charged: number; hasMore: boolean }> {
  let charged = 0;
  for (let round = 0; round < 50; round++) {
    const due = await store.duePartsOf(s.sql, o, asOf, ADVANCE_BATCH - charged);
    if (due.length === 0) return { charged, hasMore: false };
    let progressed = false;
    for (const p of due) {
      const out = await chargePart(s, p.plan_id, p.number, { dueBy: asOf, log });
      if (out.kind === 'paid' || out.kind === 'retrying' || out.kind === 'defaulted') {
        charged++;
        progressed = true;
      }
      if (charged >= ADVANCE_BATCH) return { charged, hasMore: true };
    }
    if (!progressed) return { charged, hasMore: false };
  }
  return { charged, hasMore: true };
}
