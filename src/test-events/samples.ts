import { randomBytes } from 'node:crypto';
import { presentSession } from '../checkout/presenter.ts';
import type { SessionRow } from '../checkout/store.ts';
import { presentDispute } from '../disputes/presenter.ts';
import type { DisputeRow } from '../disputes/store.ts';
import type { EventType } from '../events/catalogue.ts';
import type { ApiObject } from '../events/presenter.ts';
import { presentPlan } from '../installments/presenter.ts';
import type { PartRow, PlanRow } from '../installments/store.ts';
import { presentInvoice } from '../invoices/presenter.ts';
import type { InvoiceRow, InvoiceStatus } from '../invoices/store.ts';
import { newId, type IdPrefix } from '../lib/ids.ts';
import { presentPayment } from '../payments/presenter.ts';
import type { PaymentRow, PaymentStatus } from '../payments/store.ts';
import { presentRefund } from '../refunds/presenter.ts';
import type { RefundRow, RefundStatus } from '../refunds/store.ts';
import { presentEndpoint } from '../webhooks/presenter.ts';

/**
 * The objects a test event carries: a full resource of the event type's kind, made by the very
 * presenter a real event of that type uses, so a receiver tests the parsing it will need. Nothing
 * here is stored. Every id in a sample has the time part of an id set to zero
 * (`pay_0000000000000…`): no record ever has such an id (ids start with their creation time in
 * milliseconds), so a sample never matches a record, and a receiver can tell a sample by its ids.
 */

/** Ids of samples: a well-formed id whose 13 time and sequence characters are all zero. */
export const SAMPLE_ID = /^[a-z]+_0{13}[0-9a-z]{16}$/;

export const sampleId = (prefix: IdPrefix): string => `${prefix}_${'0'.repeat(13)}${newId(prefix).slice(-16)}`;

export interface SampleUrls {
  checkoutUrl: string;
  invoiceUrl: string;
}

/** The ids one sample refers to, so that a payment's session and a refund's payment agree. */
interface Ids {
  account: string;
  customer: string;
  session: string;
  intent: string;
  payment: string;
  refund: string;
  dispute: string;
  invoice: string;
  plan: string;
  link: string;
}

const AMOUNT = 2500;
const CURRENCY = 'usd';
const EMAIL = 'jenny.rosen@example.com';
const NAME = 'Jenny Rosen';
const ago = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);
const later = (now: Date, days: number) => new Date(now.getTime() + days * 86_400_000);

function session(ids: Ids, livemode: boolean, now: Date, completed: boolean): SessionRow {
  const created = ago(now, completed ? 3 : 24 * 60);
  return {
    id: ids.session,
    account_id: ids.account,
    livemode,
    status: completed ? 'COMPLETE' : 'EXPIRED',
    payment_status: completed ? 'paid' : 'unpaid',
    amount_cents: AMOUNT,
    currency: CURRENCY,
    success_url: 'https://example.com/checkout/success',
    cancel_url: 'https://example.com/checkout/cancel',
    customer_id: ids.customer,
    customer_email: EMAIL,
    line_items: [{ name: 'Sample T-shirt', quantity: 1, amount: AMOUNT }],
    description: 'Sample checkout session of a test event',
    metadata: {},
    payment_intent_id: completed ? ids.intent : null,
    payment_id: completed ? ids.payment : null,
    payment_link_id: null,
    link_source: null,
    invoice_id: null,
    mode: 'payment',
    installment: null,
    expires_at: completed ? later(created, 1) : now,
    completed_at: completed ? now : null,
    expired_at: completed ? null : now,
    created_at: created,
    updated_at: now,
  };
}

function payment(ids: Ids, livemode: boolean, now: Date, status: PaymentStatus, refunded: boolean, review: 'open' | 'approved' | null = null): PaymentRow {
  const failed = status === 'FAILED';
  const created = ago(now, refunded ? 2 * 24 * 60 : 1);
  return {
    id: ids.payment,
    account_id: ids.account,
    livemode,
    status,
    amount_cents: AMOUNT,
    currency: CURRENCY,
    checkout_session_id: ids.session,
    payment_intent_id: ids.intent,
    customer_id: ids.customer,
    email: EMAIL,
    billing_name: NAME,
    card_brand: 'visa',
    card_last4: failed ? '0002' : '4242',
    next_action: null,
    failure_code: failed ? 'card_declined' : null,
    failure_message: failed ? 'Your card was declined.' : null,
    description: 'Sample payment of a test event',
    payment_link_id: null,
    link_source: null,
    invoice_id: null,
    succeeded_at: status === 'SUCCEEDED' ? created : null,
    failed_at: failed ? now : null,
    amount_refunded_cents: refunded ? AMOUNT : 0,
    disputed: false,
    processing_since: null,
    processor_prior_charge: null,
    installment_plan_id: null,
    installment_number: null,
    processor_payment_method: null,
    card_fingerprint: 'fp_3f9c0a1b2d4e5f6071829304',
    card_country: 'US',
    client_ip: '203.0.113.7',
    fraud_action: review ? 'review' : null,
    fraud_rule_id: review ? sampleId('frl') : null,
    fraud_reason: review ? 'Rule "Large first orders": amount_cents >= 50000' : null,
    review_status: review,
    review_deadline: review ? later(created, 3) : null,
    review_closed_at: review === 'approved' ? now : null,
    review_closed_by: review === 'approved' ? 'ada@example.com' : null,
    created_at: created,
    updated_at: now,
  };
}

function refund(ids: Ids, livemode: boolean, now: Date, status: RefundStatus): RefundRow {
  return {
    id: ids.refund,
    account_id: ids.account,
    livemode,
    payment_id: ids.payment,
    amount_cents: AMOUNT,
    currency: CURRENCY,
    status,
    reason: 'requested_by_customer',
    failure_reason: null,
    metadata: {},
    created_at: status === 'PENDING' ? now : ago(now, 1),
    updated_at: now,
  };
}

function dispute(ids: Ids, livemode: boolean, now: Date, stage: 'created' | 'updated' | 'closed'): DisputeRow {
  const created = stage === 'created' ? now : ago(now, 3 * 24 * 60);
  return {
    id: ids.dispute,
    account_id: ids.account,
    livemode,
    payment_id: ids.payment,
    processor_dispute_id: sampleId('dp'),
    processor_created_at: created,
    amount_cents: AMOUNT,
    currency: CURRENCY,
    reason: 'fraudulent',
    status: stage === 'created' ? 'NEEDS_RESPONSE' : stage === 'updated' ? 'UNDER_REVIEW' : 'WON',
    evidence:
      stage === 'created'
        ? {}
        : { customer_name: NAME, customer_email_address: EMAIL, product_description: 'One sample T-shirt, size M, delivered by post.' },
    evidence_due_by: later(created, 7),
    pending_action: null,
    action_since: null,
    submitted_at: stage === 'created' ? null : ago(now, 24 * 60),
    closed_at: stage === 'closed' ? now : null,
    checked_at: null,
    created_at: created,
    updated_at: now,
  };
}

const INVOICE_STATUS: Record<string, InvoiceStatus> = {
  'invoice.created': 'DRAFT',
  'invoice.updated': 'DRAFT',
  'invoice.deleted': 'DRAFT',
  'invoice.finalized': 'OPEN',
  'invoice.sent': 'OPEN',
  'invoice.paid': 'PAID',
  'invoice.voided': 'VOID',
  'invoice.marked_uncollectible': 'UNCOLLECTIBLE',
};

function invoice(ids: Ids, livemode: boolean, now: Date, type: EventType): InvoiceRow {
  const status = INVOICE_STATUS[type] ?? 'OPEN';
  const draft = status === 'DRAFT';
  const sent = !draft && type !== 'invoice.finalized';
  const created = ago(now, draft ? 5 : 2 * 24 * 60);
  const total = 5000;
  const paid = status === 'PAID' ? total : 0;
  return {
    id: ids.invoice,
    account_id: ids.account,
    livemode,
    customer_id: ids.customer,
    // Real numbers start at INV-0001: INV-0000 is never given out.
    number: draft ? null : 'INV-0000',
    status,
    currency: CURRENCY,
    line_items: [
      { name: 'Sample consulting hour', quantity: 2, amount: 2000 },
      { name: 'Sample travel costs', quantity: 1, amount: 1000 },
    ],
    total_cents: total,
    amount_paid_cents: paid,
    amount_due_cents: total - paid,
    description: 'Sample invoice of a test event',
    due_date: later(created, 30),
    allow_partial_payments: false,
    minimum_payment_cents: null,
    allow_installments: false,
    installment_options: null,
    hosted_token: randomBytes(24).toString('base64url'),
    metadata: {},
    finalized_at: draft ? null : ago(now, type === 'invoice.finalized' ? 0 : 2 * 24 * 60),
    sent_at: sent ? ago(now, type === 'invoice.sent' ? 0 : 2 * 24 * 60) : null,
    paid_at: status === 'PAID' ? now : null,
    voided_at: status === 'VOID' ? now : null,
    marked_uncollectible_at: status === 'UNCOLLECTIBLE' ? now : null,
    reminder_count: 0,
    last_reminder_at: null,
    next_reminder_at: null,
    created_at: created,
    updated_at: now,
  };
}

type PlanStage = 'created' | 'completed' | 'defaulted' | 'cancelled';

/** A plan of 3 monthly parts of a sample link, at the stage its event type tells, with its parts in their states then. */
function plan(ids: Ids, livemode: boolean, now: Date, stage: PlanStage): { plan: PlanRow; parts: PartRow[] } {
  const start = stage === 'created' ? now : ago(now, 62 * 24 * 60);
  const month = (k: number) => new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + k, start.getUTCDate(), start.getUTCHours(), start.getUTCMinutes()));
  const amounts = [3334, 3333, 3333];
  const statuses: Record<PlanStage, PartRow['status'][]> = {
    created: ['PAID', 'SCHEDULED', 'SCHEDULED'],
    completed: ['PAID', 'PAID', 'PAID'],
    defaulted: ['PAID', 'FAILED', 'CANCELLED'],
    cancelled: ['PAID', 'CANCELLED', 'CANCELLED'],
  };
  const parts: PartRow[] = amounts.map((amount, i) => {
    const status = statuses[stage][i]!;
    return {
      plan_id: ids.plan,
      number: i + 1,
      amount_cents: amount,
      due_at: month(i),
      status,
      next_attempt_at: status === 'SCHEDULED' ? month(i) : null,
      attempt_count: status === 'PAID' ? 1 : status === 'FAILED' ? 4 : 0,
      payment_id: status === 'PAID' || status === 'FAILED' ? sampleId('pay') : null,
      first_failed_at: status === 'FAILED' ? month(i) : null,
      paid_at: status === 'PAID' ? month(i) : null,
    };
  });
  return {
    plan: {
      id: ids.plan,
      account_id: ids.account,
      livemode,
      customer_id: ids.customer,
      payment_link_id: ids.link,
      invoice_id: null,
      checkout_session_id: ids.session,
      currency: CURRENCY,
      total_cents: 10000,
      count: 3,
      interval: 'month',
      test_interval_seconds: null,
      test_retry_seconds: null,
      status: stage === 'created' ? 'ACTIVE' : stage === 'completed' ? 'COMPLETED' : stage === 'defaulted' ? 'DEFAULTED' : 'CANCELLED',
      email: EMAIL,
      description: 'Sample course paid in 3 monthly payments',
      processor_payment_method: null,
      card_brand: 'visa',
      card_last4: '4242',
      agreement_text: 'I authorise Sample Shop to charge my card $33.34 today and $33.33 on each of the next 2 monthly dates shown, and to keep my card with its payment processor for these payments.',
      agreed_at: start,
      agreement_ip: '203.0.113.7',
      metadata: {},
      completed_at: stage === 'completed' ? now : null,
      defaulted_at: stage === 'defaulted' ? now : null,
      cancelled_at: stage === 'cancelled' ? now : null,
      created_at: start,
      updated_at: now,
    },
    parts,
  };
}

const planSample = (stage: PlanStage) => (ids: Ids, lm: boolean, now: Date) => {
  const p = plan(ids, lm, now, stage);
  return presentPlan(p.plan, p.parts);
};

/** How each type's sample is made: every catalogue type has one (the Record makes the compiler check it). */
const SAMPLES: Record<EventType, (ids: Ids, livemode: boolean, now: Date, urls: SampleUrls) => ApiObject> = {
  'checkout.session.completed': (ids, lm, now, u) => presentSession(session(ids, lm, now, true), u.checkoutUrl),
  'checkout.session.expired': (ids, lm, now, u) => presentSession(session(ids, lm, now, false), u.checkoutUrl),
  'payment.succeeded': (ids, lm, now, u) => presentPayment(payment(ids, lm, now, 'SUCCEEDED', false), u.checkoutUrl),
  'payment.failed': (ids, lm, now, u) => presentPayment(payment(ids, lm, now, 'FAILED', false), u.checkoutUrl),
  'payment.refunded': (ids, lm, now, u) => presentPayment(payment(ids, lm, now, 'SUCCEEDED', true), u.checkoutUrl),
  'payment.review_opened': (ids, lm, now, u) => presentPayment(payment(ids, lm, now, 'PENDING', false, 'open'), u.checkoutUrl),
  'payment.review_closed': (ids, lm, now, u) => presentPayment(payment(ids, lm, now, 'SUCCEEDED', false, 'approved'), u.checkoutUrl),
  'refund.created': (ids, lm, now) => presentRefund(refund(ids, lm, now, 'PENDING')),
  'refund.updated': (ids, lm, now) => presentRefund(refund(ids, lm, now, 'SUCCEEDED')),
  'dispute.created': (ids, lm, now) => presentDispute(dispute(ids, lm, now, 'created')),
  'dispute.updated': (ids, lm, now) => presentDispute(dispute(ids, lm, now, 'updated')),
  'dispute.closed': (ids, lm, now) => presentDispute(dispute(ids, lm, now, 'closed')),
  'invoice.paid': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.paid'), u.invoiceUrl),
  'invoice.sent': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.sent'), u.invoiceUrl),
  'invoice.created': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.created'), u.invoiceUrl),
  'invoice.updated': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.updated'), u.invoiceUrl),
  'invoice.deleted': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.deleted'), u.invoiceUrl),
  'invoice.finalized': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.finalized'), u.invoiceUrl),
  'invoice.voided': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.voided'), u.invoiceUrl),
  'invoice.marked_uncollectible': (ids, lm, now, u) => presentInvoice(invoice(ids, lm, now, 'invoice.marked_uncollectible'), u.invoiceUrl),
  'installment_plan.created': planSample('created'),
  'installment_plan.completed': planSample('completed'),
  'installment_plan.defaulted': planSample('defaulted'),
  'installment_plan.cancelled': planSample('cancelled'),
  'webhook_endpoint.disabled': (_ids, lm, now) => {
    const since = new Date(now.getTime() - 5 * 24 * 3600 * 1000);
    return presentEndpoint({
      id: sampleId('we'),
      account_id: '',
      livemode: lm,
      url: 'https://shop.example.com/webhooks',
      description: 'Sample endpoint',
      enabled_events: ['*'],
      is_active: false,
      secret: '',
      previous_secret: null,
      previous_secret_expires_at: null,
      failing_since: since,
      failed_attempts: 42,
      failure_warned_at: new Date(now.getTime() - 24 * 3600 * 1000),
      disabled_at: now,
      headers: {},
      rate_limit: null,
      ordered: false,
      created_at: since,
      updated_at: now,
    });
  },
};

/** A sample of the object a `type` event carries, in the given mode, with fresh sample ids. */
export function sampleObject(type: EventType, livemode: boolean, urls: SampleUrls, now = new Date()): ApiObject {
  const ids: Ids = {
    account: sampleId('acct'),
    customer: sampleId('cus'),
    session: sampleId('cs'),
    intent: sampleId('pi'),
    payment: sampleId('pay'),
    refund: sampleId('re'),
    dispute: sampleId('dp'),
    invoice: sampleId('in'),
    plan: sampleId('ip'),
    link: sampleId('pl'),
  };
  return SAMPLES[type](ids, livemode, now, urls);
}
