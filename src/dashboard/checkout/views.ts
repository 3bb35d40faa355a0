import { sessionUrl } from '../../checkout/presenter.ts';
import type { SessionRow } from '../../checkout/store.ts';
import { html, type Html } from '../../pages/html.ts';
import type { PaymentRow } from '../../payments/store.ts';
import type { ShellPage } from '../layout.ts';
import { metadataText } from '../forms.ts';
import {
  alertBox,
  badge,
  card,
  confirmPanel,
  copyable,
  customerRef,
  facts,
  filterBar,
  lineItemsTable,
  money,
  pager,
  statusBadge,
  table,
  when,
  type Forms,
  type ListPage,
} from '../widgets.ts';

const BASE = '/dashboard/checkout-sessions';
export const sessionPath = (id: string): string => `${BASE}/${id}`;

const PAYMENT_STATUS: Record<SessionRow['payment_status'], string> = { unpaid: 'Unpaid', paid: 'Paid', no_payment_required: 'No payment required' };
const paymentStatus = (s: SessionRow) => (s.payment_status === 'paid' ? badge('Paid', 'good') : badge(PAYMENT_STATUS[s.payment_status]));
const mono = (v: string) => html`<span class="mono">${v}</span>`;

/** Who pays: the customer's email typed or known, else the customer's id. */
const payerOf = (s: SessionRow): Html | string => s.customer_email ?? (s.customer_id ? mono(s.customer_id) : '—');

export interface SessionFilters {
  status?: string | undefined;
  customer_id?: string | undefined;
}

export function sessionsList(page: ListPage<SessionRow>, filters: SessionFilters, wasCursor: boolean, notice: Html): ShellPage {
  const filtered = Object.values(filters).some(Boolean);
  return {
    section: 'checkout-sessions',
    title: 'Checkout sessions',
    body: html`${notice}${card(
      null,
      html`${filterBar(BASE, [
        { kind: 'select', name: 'status', label: 'Status', value: filters.status, options: ['OPEN', 'COMPLETE', 'EXPIRED'].map((v) => ({ value: v, label: v[0] + v.slice(1).toLowerCase() })) },
        { kind: 'text', name: 'customer_id', label: 'Customer ID', value: filters.customer_id, placeholder: 'cus_…' },
      ])}
${table<SessionRow>(
        [
          { label: 'Amount', cell: (s) => money(s.amount_cents, s.currency), num: true },
          { label: 'Status', cell: (s) => statusBadge(s.status) },
          { label: 'Payment', cell: paymentStatus },
          { label: 'Customer', cell: payerOf },
          { label: 'Created', cell: (s) => html`<span class="nowrap">${when(s.created_at)}</span>` },
          { label: 'Expires', cell: (s) => html`<span class="nowrap">${s.status === 'OPEN' ? when(s.expires_at) : '—'}</span>` },
        ],
        page.rows,
        (s) => sessionPath(s.id),
        filtered ? 'No checkout session matches these filters.' : 'No checkout sessions yet. Your integration creates them through the API; payment links and invoices open them for their payers.',
      )}
${pager(BASE, { ...filters }, page, wasCursor)}`,
    )}`,
  };
}

/** Where a session came from, linking to the dashboard page of its payment link or invoice. */
function originOf(s: SessionRow, linkName: string | null): Html {
  if (s.payment_link_id) {
    const source = s.link_source ? html` (source ${s.link_source})` : '';
    return html`Payment link <a href="/dashboard/payment-links/${s.payment_link_id}">${linkName ?? s.payment_link_id}</a>${source}`;
  }
  if (s.invoice_id) return html`Invoice <a href="/dashboard/invoices/${s.invoice_id}">${s.invoice_id}</a>`;
  return html`The API`;
}

const brand = (b: string | null) => (b ? b[0]!.toUpperCase() + b.slice(1) : 'Card');
const cardOf = (p: PaymentRow) => (p.card_last4 ? `${brand(p.card_brand)} •••• ${p.card_last4}` : '—');

export interface SessionView {
  session: SessionRow;
  /** Its customer id when that customer still exists (a deleted one is not linked). */
  knownCustomers: ReadonlySet<string>;
  attempts: PaymentRow[];
  /** The internal name of its payment link, when it came from one. */
  linkName: string | null;
  checkoutUrl: string;
  confirmExpire: boolean;
  notice: Html;
  /** The API's refusal of an action, shown above the session. */
  error?: string | null;
}

export function sessionDetail(v: SessionView, f: Forms): ShellPage {
  const s = v.session;
  const path = sessionPath(s.id);
  return {
    section: 'checkout-sessions',
    title: `${money(s.amount_cents, s.currency)} checkout session`,
    crumbs: [['Checkout sessions', BASE]],
    actions: s.status === 'OPEN' && !v.confirmExpire ? html`<a class="btn danger" href="${path}?confirm=expire">Expire session</a>` : undefined,
    body: html`${v.notice}${alertBox('error', v.error ?? null)}${v.confirmExpire && s.status === 'OPEN'
      ? confirmPanel({
          heading: 'Expire this checkout session?',
          text: 'The payer can no longer pay on its page, and a checkout.session.expired event is sent to your webhooks. This cannot be undone: create a new session to take the payment.',
          action: `${path}/expire`,
          forms: f,
          button: 'Expire session',
          back: path,
        })
      : ''}${card(
      'Details',
      facts([
        ['ID', mono(s.id)],
        ['Status', statusBadge(s.status)],
        ['Payment status', paymentStatus(s)],
        ['Amount', money(s.amount_cents, s.currency)],
        ['Currency', s.currency.toUpperCase()],
        ['Description', s.description],
        ['Customer', s.customer_id ? customerRef(s.customer_id, v.knownCustomers) : null],
        ['Customer email', s.customer_email],
        ['Checkout page', copyable(sessionUrl(v.checkoutUrl, s.id), 'checkout page URL', html`data-session-url`)],
        ['Success URL', mono(s.success_url)],
        ['Cancel URL', s.cancel_url ? mono(s.cancel_url) : null],
        ['Came from', originOf(s, v.linkName)],
        ['Payment', s.payment_id ? html`<a class="mono" href="/dashboard/payments/${s.payment_id}">${s.payment_id}</a>` : null],
        ['Processor intent', s.payment_intent_id ? mono(s.payment_intent_id) : null],
        ['Created', when(s.created_at)],
        ['Expires', when(s.expires_at)],
        !!s.completed_at && ['Completed', when(s.completed_at)],
        !!s.expired_at && ['Expired', when(s.expired_at)],
        ['Updated', when(s.updated_at)],
        ['Metadata', Object.keys(s.metadata).length ? html`<span class="mono pre">${metadataText(s.metadata)}</span>` : null],
      ]),
    )}${card('Line items', lineItemsTable(s.line_items, s.currency, s.amount_cents))}${card(
      'Payment attempts',
      table<PaymentRow>(
        [
          { label: 'Payment', cell: (p) => mono(p.id) },
          { label: 'Amount', cell: (p) => money(p.amount_cents, p.currency), num: true },
          { label: 'Status', cell: (p) => statusBadge(p.status) },
          { label: 'Card', cell: cardOf },
          { label: 'Failure', cell: (p) => p.failure_message ?? '—' },
          { label: 'Date', cell: (p) => html`<span class="nowrap">${when(p.created_at)}</span>` },
        ],
        v.attempts,
        (p) => `/dashboard/payments/${p.id}`,
        'No payment attempts on this session yet.',
      ),
    )}`,
  };
}
