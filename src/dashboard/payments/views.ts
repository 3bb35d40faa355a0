import { paymentFraudCard } from '../fraud/views.ts';
import type { SessionRow } from '../../checkout/store.ts';
import type { DisputeRow } from '../../disputes/store.ts';
import { html, type Html } from '../../pages/html.ts';
import type { PaymentRow } from '../../payments/store.ts';
import { REFUND_REASONS } from '../../refunds/schema.ts';
import type { RefundRow } from '../../refunds/store.ts';
import { amountText, metadataText } from '../forms.ts';
import type { ShellPage } from '../layout.ts';
import {
  alertBox,
  card,
  confirmPanel,
  customerRef,
  facts,
  filterBar,
  formError,
  input,
  lineItemsTable,
  money,
  pager,
  select,
  statusBadge,
  table,
  when,
  type FormState,
  type Forms,
  type ListPage,
} from '../widgets.ts';
import { disputesCard } from './dispute-views.ts';

const BASE = '/dashboard/payments';
export const paymentPath = (id: string): string => `${BASE}/${id}`;

const BRANDS: Record<string, string> = {
  visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover', diners: 'Diners Club',
  jcb: 'JCB', unionpay: 'UnionPay', cartes_bancaires: 'Cartes Bancaires',
};

/** "Visa •••• 4242": the brand and last four only; null when the processor reported no card. */
export function cardText(p: Pick<PaymentRow, 'card_brand' | 'card_last4'>): string | null {
  if (!p.card_last4) return null;
  const b = p.card_brand?.toLowerCase();
  const brand = b && b !== 'unknown' ? (BRANDS[b] ?? b.charAt(0).toUpperCase() + b.slice(1)) : 'Card';
  return `${brand} •••• ${p.card_last4.slice(-4)}`;
}

/** The badges of a payment: its status, then refunded in full or in part, then disputed. */
export function paymentBadges(p: PaymentRow): Html {
  const refunded = p.amount_refunded_cents > 0 && p.amount_refunded_cents >= p.amount_cents;
  const partly = p.amount_refunded_cents > 0 && !refunded;
  return html`<span class="pay-badges">${statusBadge(p.status)}${refunded ? statusBadge('REFUNDED') : ''}${partly ? statusBadge('PARTLY REFUNDED') : ''}${p.disputed ? statusBadge('DISPUTED') : ''}</span>`;
}

/** The payer: a link to the customer while it exists (never to a deleted one's 404), else the email typed. */
const customerCell = (p: PaymentRow, known: ReadonlySet<string>): Html | string =>
  p.customer_id ? customerRef(p.customer_id, known, p.email ?? p.customer_id) : (p.email ?? '—');

export const STATUS_OPTIONS = [
  { value: 'SUCCEEDED', label: 'Succeeded' },
  { value: 'PENDING', label: 'Pending' },
  { value: 'FAILED', label: 'Failed' },
];

/** `limit` is kept by the pager's links when the URL set it (the filters are the form's). */
export function paymentsList(
  page: ListPage<PaymentRow>,
  filters: { status?: string | undefined; customer?: string | undefined },
  knownCustomers: ReadonlySet<string>,
  limit: string | undefined,
  wasCursor: boolean,
): ShellPage {
  const filtered = !!(filters.status || filters.customer);
  return {
    section: 'payments',
    title: 'Payments',
    body: card(
      null,
      html`${filterBar(BASE, [
        { kind: 'select', name: 'status', label: 'Status', options: STATUS_OPTIONS, value: filters.status },
        { kind: 'text', name: 'customer', label: 'Customer ID or email', value: filters.customer, placeholder: 'cus_… or ada@example.com' },
      ])}
${table<PaymentRow>(
        [
          { label: 'Amount', cell: (p) => money(p.amount_cents, p.currency), num: true },
          { label: 'Status', cell: paymentBadges },
          { label: 'Description', cell: (p) => p.description ?? '—' },
          { label: 'Card', cell: (p) => html`<span class="nowrap">${cardText(p) ?? '—'}</span>` },
          { label: 'Customer', cell: (p) => customerCell(p, knownCustomers) },
          { label: 'Created', cell: (p) => html`<span class="nowrap">${when(p.created_at)}</span>` },
        ],
        page.rows,
        (p) => paymentPath(p.id),
        filtered
          ? 'No payments match these filters.'
          : 'No payments yet. They appear here as payers pay checkout sessions, payment links and invoices.',
      )}
${pager(BASE, { ...filters, limit }, page, wasCursor)}`,
    ),
  };
}

/** What the page of a payment asks for confirmation of (`?confirm=…`). */
export type Confirm = { kind: 'cancel-refund'; refund: RefundRow } | { kind: 'accept-dispute'; dispute: DisputeRow };

export interface PaymentView {
  payment: PaymentRow;
  /** The checkout session it was paid on (its line items and metadata), when there is one. */
  session: SessionRow | null;
  /** Which of its customer ids still exist (a deleted customer is not linked). */
  knownCustomers: ReadonlySet<string>;
  receiptUrl: string | null;
  /** Oldest first. */
  refunds: RefundRow[];
  disputes: DisputeRow[];
  notice: Html;
  /** An action on the page that was refused (a cancel, an acceptance), shown at its top. */
  problem?: string | null;
  /** Whether the user may approve or refuse a review (fraud.manage). */
  canReview?: boolean;
  /** The refund form as posted, with the API's error; absent: prefilled with what is left. */
  refundForm?: FormState | null;
  /** The evidence form of one dispute as posted, with the API's error. */
  evidence?: { disputeId: string; state: FormState } | null;
  confirm?: Confirm | null;
}

/** What is taken of the payment: its PENDING and SUCCEEDED refunds (the service's own rule). */
export const refundedOrPending = (refunds: readonly RefundRow[]): number =>
  refunds.filter((r) => r.status === 'PENDING' || r.status === 'SUCCEEDED').reduce((n, r) => n + r.amount_cents, 0);

export function paymentDetail(v: PaymentView, f: Forms): ShellPage {
  const p = v.payment;
  const path = paymentPath(p.id);
  return {
    section: 'payments',
    title: `${money(p.amount_cents, p.currency)} ${p.currency.toUpperCase()}`,
    crumbs: [['Payments', BASE]],
    body: html`${v.notice}${alertBox('error', v.problem)}${confirmOf(v, f, path)}
<div class="columns">${card('Payment', facts([
      ['Status', paymentBadges(p)],
      ['Amount', money(p.amount_cents, p.currency)],
      ['Refunded', money(p.amount_refunded_cents, p.currency)],
      ['Card', cardText(p)],
      ['Email', p.email],
      ['Billing name', p.billing_name],
      ['Description', p.description],
      p.status === 'PENDING' && p.next_action === 'three_d_secure' ? ['Waiting for', 'The payer to finish 3-D Secure'] : null,
      p.status === 'FAILED' ? ['Failure code', p.failure_code ? html`<span class="mono">${p.failure_code}</span>` : null] : null,
      p.status === 'FAILED' ? ['Failure message', p.failure_message] : null,
    ]))}${card('Where it came from', facts([
      ['Checkout session', p.checkout_session_id ? html`<a class="mono" href="/dashboard/checkout-sessions/${p.checkout_session_id}">${p.checkout_session_id}</a>` : null],
      p.payment_link_id
        ? ['Payment link', html`<a class="mono" href="/dashboard/payment-links/${p.payment_link_id}">${p.payment_link_id}</a>${p.link_source ? html` <span class="muted">(${linkSource(p.link_source)})</span>` : ''}`]
        : null,
      p.invoice_id ? ['Invoice', html`<a class="mono" href="/dashboard/invoices/${p.invoice_id}">${p.invoice_id}</a>`] : null,
      // A part of an installment plan (issue 16): the plan (GET /v1/installment-plans/:id) and which part.
      p.installment_plan_id
        ? ['Installment plan', html`<span class="mono">${p.installment_plan_id}</span>${p.installment_number ? html` <span class="muted">(payment ${p.installment_number})</span>` : ''}`]
        : null,
      ['Customer', p.customer_id ? customerRef(p.customer_id, v.knownCustomers) : null],
      ['Receipt', v.receiptUrl ? html`<a href="${v.receiptUrl}" target="_blank" rel="noopener">Open the receipt</a>` : null],
      ['Payment ID', html`<span class="mono">${p.id}</span>`],
      ['Created', when(p.created_at)],
      p.succeeded_at ? ['Succeeded', when(p.succeeded_at)] : null,
      p.failed_at ? ['Failed', when(p.failed_at)] : null,
    ]))}</div>
${paymentFraudCard(p, f, v.canReview ?? false)}${sessionCard(v.session)}${refundsCard(v, f, path)}${disputesCard(v.disputes, f, path, v.evidence ?? null)}`,
  };
}

/** What the checkout session sold: its line items and the merchant's metadata (issue 22). */
function sessionCard(cs: SessionRow | null): Html {
  if (!cs) return html``;
  const metadata = Object.keys(cs.metadata).length ? html`<span class="mono pre">${metadataText(cs.metadata)}</span>` : html`<span class="muted">None.</span>`;
  return card(
    'Checkout session',
    html`${lineItemsTable(cs.line_items, cs.currency, cs.amount_cents)}
${facts([cs.description ? ['Description', cs.description] : null, ['Metadata', metadata]])}`,
    html`id="session"`,
  );
}

const SOURCES: Record<string, string> = { DIRECT: 'opened directly', EMBED: 'from an embed', WHATSAPP: 'from WhatsApp', QR: 'from the QR code' };
const linkSource = (s: string) => SOURCES[s] ?? s.toLowerCase();

function confirmOf(v: PaymentView, f: Forms, path: string): Html {
  const c = v.confirm;
  if (!c) return html``;
  if (c.kind === 'cancel-refund') {
    return confirmPanel({
      heading: 'Cancel this refund?',
      text: `The refund of ${money(c.refund.amount_cents, c.refund.currency)} is cancelled if the card processor has not paid it out yet; its amount can then be refunded again. If it has already gone through, nothing changes and this page says so.`,
      action: `${path}/refunds/${c.refund.id}/cancel`,
      forms: f,
      button: 'Cancel the refund',
      back: path,
    });
  }
  return confirmPanel({
    heading: 'Accept this dispute?',
    text: `Accepting closes the dispute as lost: the ${money(c.dispute.amount_cents, c.dispute.currency)} stays with the cardholder and no evidence can be sent any more. This cannot be undone.`,
    action: `${path}/disputes/${c.dispute.id}/close`,
    forms: f,
    button: 'Accept the dispute',
    back: path,
  });
}

const REASON_LABELS: Record<(typeof REFUND_REASONS)[number], string> = {
  requested_by_customer: 'Requested by the customer',
  duplicate: 'Duplicate payment',
  fraudulent: 'Fraudulent',
};
const reasonText = (r: string | null) => (r ? (REASON_LABELS[r as keyof typeof REASON_LABELS] ?? r) : '—');

export const REFUND_FIELDS = ['amount', 'reason'] as const;

function refundsCard(v: PaymentView, f: Forms, path: string): Html {
  const p = v.payment;
  if (p.status !== 'SUCCEEDED' && !v.refunds.length && !v.refundForm?.error) return html``;
  const left = p.amount_cents - refundedOrPending(v.refunds);
  const pending = v.refunds.filter((r) => r.status === 'PENDING').reduce((n, r) => n + r.amount_cents, 0);
  const rows = [...v.refunds].reverse(); // newest first, as every list
  const canRefund = p.status === 'SUCCEEDED' && left > 0 && !p.disputed;
  return card(
    'Refunds',
    html`${table<RefundRow>(
      [
        { label: 'Amount', cell: (r) => money(r.amount_cents, r.currency), num: true },
        { label: 'Status', cell: (r) => statusBadge(r.status) },
        { label: 'Reason', cell: (r) => reasonText(r.reason) },
        { label: 'Created', cell: (r) => html`<span class="nowrap">${when(r.created_at)}</span>` },
        {
          label: 'Details',
          cell: (r) =>
            r.status === 'PENDING'
              ? html`<a class="btn small danger" href="${path}?confirm=cancel-refund&amp;refund=${r.id}">Cancel</a>`
              : r.failure_reason
                ? html`Failed: <span class="mono">${r.failure_reason}</span>`
                : html`<span class="mono">${r.id}</span>`,
        },
      ],
      rows,
      null,
      p.status === 'SUCCEEDED' ? 'Not refunded.' : 'No refunds.',
    )}
${pending ? html`<p class="muted">${money(pending, p.currency)} is pending: the card processor has not confirmed it yet. This page shows the outcome once it has (reload to see it).</p>` : ''}
${canRefund || v.refundForm?.error ? refundForm(v, f, path, left) : refundNote(p, left)}`,
    html`id="refunds"`,
  );
}

function refundNote(p: PaymentRow, left: number): Html {
  if (p.status !== 'SUCCEEDED') return html``;
  if (p.disputed) return html`<p class="muted">This payment is disputed: it cannot be refunded while the dispute stands.</p>`;
  if (left <= 0) return html`<p class="muted">Nothing is left to refund${p.amount_refunded_cents < p.amount_cents ? ' (pending refunds count as taken)' : ''}.</p>`;
  return html``;
}

function refundForm(v: PaymentView, f: Forms, path: string, left: number): Html {
  const p = v.payment;
  const state: FormState = v.refundForm ?? { values: { amount: amountText(Math.max(left, 0), p.currency), reason: '' } };
  return html`<form class="refund-form" method="post" action="${path}/refunds" novalidate aria-labelledby="refund-h">
<h3 id="refund-h">Refund this payment</h3>
${formError(state, REFUND_FIELDS)}
${f.hidden()}
<div class="fields">
${input({
    name: 'amount',
    label: `Amount (${p.currency.toUpperCase()})`,
    // Opened afresh, the field holds all that is left (what an empty field refunds too): the hint says so.
    hint: v.refundForm
      ? `Up to ${money(Math.max(left, 0), p.currency)}. Left empty, it refunds all that is left.`
      : `All that is left, ${money(Math.max(left, 0), p.currency)}, is filled in: type less to refund part of it.`,
    state,
    attrs: html`inputmode="decimal" autocomplete="off"`,
  })}
${select({
    name: 'reason',
    label: 'Reason',
    state,
    options: [{ value: '', label: 'None' }, ...REFUND_REASONS.map((r) => ({ value: r, label: REASON_LABELS[r] }))],
  })}
</div>
<p class="hint">The money goes back to the card it came from. A refund stays pending until the card processor confirms it.</p>
<div class="form-actions"><button type="submit" class="primary">Refund</button></div>
</form>`;
}
