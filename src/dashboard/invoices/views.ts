import type { EmailRow } from '../../email/store.ts';
import type { Invoice } from '../../invoices/presenter.ts';
import type { BilledCustomer, InvoiceRow } from '../../invoices/store.ts';
import { INVOICE_STATUSES } from '../../invoices/schema.ts';
import { html, raw, type Html } from '../../pages/html.ts';
import type { PaymentRow } from '../../payments/store.ts';
import type { ShellPage } from '../layout.ts';
import { metadataText } from '../forms.ts';
import {
  alertBox,
  badge,
  buttonForm,
  card,
  checkbox,
  confirmPanel,
  copyable,
  emailStatusCell,
  facts,
  filterBar,
  formError,
  input,
  money,
  pager,
  statusBadge,
  table,
  when,
  type FormState,
  type Forms,
  type ListPage,
} from '../widgets.ts';

export const BASE = '/dashboard/invoices';
export const invoicePath = (id: string): string => `${BASE}/${id}`;

/**
 * Rows of line items a form holds: 5 on the create form, and a window of 10 of the draft's lines
 * (`from` on) on the edit page's lines form, so that a draft of any size (the API takes 100 lines)
 * can be edited without a form of hundreds of fields.
 */
export const NEW_LINE_ROWS = 5;
export const EDIT_LINE_ROWS = 10;

export const DETAIL_FIELDS = ['customer_id', 'currency', 'description', 'due_date', 'allow_partial_payments', 'minimum_payment_cents', 'metadata'] as const;

/** The names of a form row's fields, as the API names a line's parameters (`line_items[1][amount]`). */
export const lineField = (row: number, field: 'name' | 'quantity' | 'amount'): string => `line_items[${row}][${field}]`;

const mono = (v: string) => html`<span class="mono">${v}</span>`;
const nameOf = (c: BilledCustomer) => [c.first_name, c.last_name].filter(Boolean).join(' ');
const titleOf = (inv: InvoiceRow) => inv.number ?? 'Draft invoice';
const overdue = (inv: InvoiceRow) => inv.status === 'OPEN' && inv.due_date !== null && inv.due_date.getTime() < Date.now();

function statusOf(inv: InvoiceRow): Html {
  return html`${statusBadge(inv.status)}${overdue(inv) ? html` ${badge('OVERDUE', 'warn')}` : ''}`;
}

/** Who an invoice is billed to: the customer's email, or its id once the customer is deleted. */
function billedTo(inv: InvoiceRow, customers: ReadonlyMap<string, BilledCustomer>): Html | string {
  const c = customers.get(inv.customer_id);
  return c ? c.email : html`${mono(inv.customer_id)} <span class="muted">(deleted)</span>`;
}

export interface InvoiceFilters {
  status?: string | undefined;
  customer_id?: string | undefined;
}

export function invoicesList(page: ListPage<InvoiceRow>, customers: ReadonlyMap<string, BilledCustomer>, filters: InvoiceFilters, wasCursor: boolean, notice: Html): ShellPage {
  const filtered = Object.values(filters).some(Boolean);
  return {
    section: 'invoices',
    title: 'Invoices',
    actions: html`<a class="btn primary" href="${BASE}/new">New invoice</a>`,
    body: html`${notice}${card(
      null,
      html`${filterBar(BASE, [
        { kind: 'select', name: 'status', label: 'Status', value: filters.status, options: INVOICE_STATUSES.map((v) => ({ value: v, label: v[0] + v.slice(1).toLowerCase() })) },
        { kind: 'text', name: 'customer_id', label: 'Customer ID', value: filters.customer_id, placeholder: 'cus_…' },
      ])}
${table<InvoiceRow>(
        [
          { label: 'Number', cell: (i) => i.number ?? 'Draft' },
          { label: 'Customer', cell: (i) => billedTo(i, customers) },
          { label: 'Total', cell: (i) => money(i.total_cents, i.currency), num: true },
          { label: 'Amount due', cell: (i) => money(i.amount_due_cents, i.currency), num: true },
          { label: 'Status', cell: statusOf },
          { label: 'Due', cell: (i) => html`<span class="nowrap">${when(i.due_date)}</span>` },
          { label: 'Created', cell: (i) => html`<span class="nowrap">${when(i.created_at)}</span>` },
        ],
        page.rows,
        (i) => invoicePath(i.id),
        filtered ? 'No invoice matches these filters.' : 'No invoices yet. Create one here or through the API.',
      )}
${pager(BASE, { ...filters }, page, wasCursor)}`,
    )}`,
  };
}

export interface InvoiceView {
  inv: InvoiceRow;
  /** The invoice as the API presents it (the hosted URLs, live once sent). */
  api: Invoice;
  customer: BilledCustomer | null;
  payments: PaymentRow[];
  emails: EmailRow[];
  notice: Html;
  /** The API's refusal of an action just tried. */
  error: string | null;
  confirm: 'void' | 'uncollectible' | 'delete' | null;
}

const cardOf = (p: PaymentRow) => (p.card_last4 ? `${p.card_brand ?? 'Card'} •••• ${p.card_last4}` : '—');
const TEMPLATE: Record<string, string> = { invoice: 'Invoice', invoice_reminder: 'Reminder', receipt: 'Receipt', refund_notice: 'Refund notice' };

/** The lines with their amounts, and the total. */
export function lineItemsTable(inv: InvoiceRow): Html {
  if (!inv.line_items.length) return html`<p class="empty">No line items yet.</p>`;
  return html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Item</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Unit amount</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${inv.line_items.map(
    (l) => html`<tr><td>${l.name}</td><td class="num">${l.quantity}</td><td class="num">${money(l.amount, inv.currency)}</td><td class="num">${money(l.quantity * l.amount, inv.currency)}</td></tr>`,
  )}</tbody>
<tfoot><tr><th scope="row" colspan="3">Total</th><td class="num"><strong>${money(inv.total_cents, inv.currency)}</strong></td></tr></tfoot>
</table></div>`;
}

/** The buttons an invoice's status allows (the API decides; a refusal is shown on this page). */
function actionsOf(inv: InvoiceRow, f: Forms): Html {
  const path = invoicePath(inv.id);
  switch (inv.status) {
    case 'DRAFT':
      return html`<a class="btn" href="${path}/edit">Edit</a>${buttonForm(`${path}/finalize`, f, 'Finalize')}${buttonForm(`${path}/send`, f, 'Send', { kind: 'primary' })}<a class="btn danger" href="${path}?confirm=delete">Delete</a>`;
    case 'OPEN':
      return html`${buttonForm(`${path}/send`, f, inv.sent_at ? 'Send again' : 'Send', { kind: inv.sent_at ? '' : 'primary' })}<a class="btn" href="${path}?confirm=uncollectible">Mark uncollectible</a><a class="btn danger" href="${path}?confirm=void">Void</a>`;
    case 'UNCOLLECTIBLE':
      return html`${buttonForm(`${path}/send`, f, 'Send again')}<a class="btn danger" href="${path}?confirm=void">Void</a>`;
    default:
      return html``;
  }
}

function confirmOf(v: InvoiceView, f: Forms): Html {
  const path = invoicePath(v.inv.id);
  const name = v.inv.number ?? 'this draft';
  switch (v.confirm) {
    case 'void':
      return confirmPanel({
        heading: `Void ${name}?`,
        text: 'A void invoice can no longer be paid, and is never reminded again. This cannot be undone. An invoice that is partly paid cannot be voided: mark it uncollectible instead.',
        action: `${path}/void`,
        forms: f,
        button: 'Void invoice',
        back: path,
      });
    case 'uncollectible':
      return confirmPanel({
        heading: `Mark ${name} uncollectible?`,
        text: 'You no longer expect it to be paid: reminders stop. The customer can still pay it, and you can still void it.',
        action: `${path}/mark-uncollectible`,
        forms: f,
        button: 'Mark uncollectible',
        back: path,
      });
    case 'delete':
      return confirmPanel({
        heading: 'Delete this draft?',
        text: 'The draft is deleted for good. Only drafts can be deleted: a finalized invoice is voided instead.',
        action: `${path}/delete`,
        forms: f,
        button: 'Delete draft',
        back: path,
      });
    default:
      return html``;
  }
}

/** The hosted page and PDF, once the invoice is sent (its page is live). */
function hostedCard(v: InvoiceView): Html {
  const url = v.api.hosted_invoice_url;
  if (!url || !v.api.invoice_pdf) {
    return card(
      'Invoice page',
      html`<p class="muted">The invoice's page, where the customer pays it, and its PDF go live when the invoice is sent.</p>`,
    );
  }
  return card(
    'Invoice page',
    html`<p class="muted">Where the customer sees and pays the invoice. Anyone with this link can open it.</p>
${copyable(url, 'the invoice page link', html`data-hosted-url`)}
<p><a href="${url}" data-open-hosted>Open the invoice page</a> · <a href="${v.api.invoice_pdf}">Download the PDF</a></p>`,
  );
}

export function invoiceDetail(v: InvoiceView, f: Forms): ShellPage {
  const { inv, customer } = v;
  const partial = inv.allow_partial_payments
    ? `Allowed${inv.minimum_payment_cents !== null ? `, at least ${money(inv.minimum_payment_cents, inv.currency)} each` : ''}`
    : 'Not allowed';
  return {
    section: 'invoices',
    title: titleOf(inv),
    crumbs: [['Invoices', BASE]],
    actions: actionsOf(inv, f),
    body: html`${v.notice}${v.error ? alertBox('error', v.error) : ''}${v.error ? '' : confirmOf(v, f)}${card(
      'Summary',
      facts([
        ['Status', statusOf(inv)],
        ['Number', inv.number ?? html`<span class="muted">Given when finalized</span>`],
        ['Customer', customer ? html`<a href="/dashboard/customers/${customer.id}">${nameOf(customer) || customer.email}</a>` : html`${mono(inv.customer_id)} <span class="muted">(deleted)</span>`],
        ['Billed to', customer ? customer.email : null],
        ['Currency', inv.currency.toUpperCase()],
        ['Total', money(inv.total_cents, inv.currency)],
        ['Amount paid', money(inv.amount_paid_cents, inv.currency)],
        ['Amount due', html`<strong data-amount-due>${money(inv.amount_due_cents, inv.currency)}</strong>`],
        ['Partial payments', partial],
        ['Description', inv.description ? html`<span class="pre">${inv.description}</span>` : null],
        ['Due date', when(inv.due_date)],
        ['ID', mono(inv.id)],
      ]),
    )}${card('Line items', lineItemsTable(inv))}${hostedCard(v)}<div class="columns">${card(
      'Reminders',
      facts([
        ['Sent', String(inv.reminder_count)],
        ['Last sent', when(inv.last_reminder_at)],
        ['Next', inv.next_reminder_at ? when(inv.next_reminder_at) : 'None planned'],
      ]),
    )}${card(
      'History',
      facts([
        ['Created', when(inv.created_at)],
        ['Finalized', when(inv.finalized_at)],
        ['Sent', when(inv.sent_at)],
        ['Paid', when(inv.paid_at)],
        ['Marked uncollectible', when(inv.marked_uncollectible_at)],
        ['Voided', when(inv.voided_at)],
        ['Updated', when(inv.updated_at)],
      ]),
    )}</div>${card(
      'Payments',
      table<PaymentRow>(
        [
          { label: 'Amount', cell: (p) => money(p.amount_cents, p.currency), num: true },
          { label: 'Status', cell: (p) => statusBadge(p.status) },
          { label: 'Card', cell: cardOf },
          { label: 'Payer', cell: (p) => p.email ?? '—' },
          { label: 'Date', cell: (p) => html`<span class="nowrap">${when(p.created_at)}</span>` },
        ],
        v.payments,
        (p) => `/dashboard/payments/${p.id}`,
        'No payment of this invoice yet.',
      ),
    )}${card(
      'Emails',
      table<EmailRow>(
        [
          { label: 'Email', cell: (e) => TEMPLATE[e.template] ?? e.template },
          { label: 'To', cell: (e) => e.to_address },
          { label: 'Subject', cell: (e) => e.subject },
          { label: 'Status', cell: emailStatusCell },
          { label: 'Queued', cell: (e) => html`<span class="nowrap">${when(e.created_at)}</span>` },
          { label: 'Left', cell: (e) => html`<span class="nowrap">${when(e.sent_at)}</span>` },
        ],
        v.emails,
        null,
        'No email sent for this invoice yet.',
      ),
    )}${card('Metadata', Object.keys(inv.metadata).length ? html`<span class="mono pre">${metadataText(inv.metadata)}</span>` : html`<p class="muted">None.</p>`)}`,
  };
}

/** Suggestions for the customer field: the account's newest customers (a datalist: the id can still be typed). */
function customerOptions(customers: readonly BilledCustomer[]): Html {
  return html`<datalist id="customer-options">${customers.map((c) => html`<option value="${c.id}">${c.email}${nameOf(c) ? ` (${nameOf(c)})` : ''}</option>`)}</datalist>`;
}

const CURRENCIES = ['usd', 'eur', 'gbp', 'cad', 'aud', 'chf', 'jpy', 'sek', 'nok', 'dkk', 'nzd', 'sgd'];

function detailFields(state: FormState, customers: readonly BilledCustomer[], editing: boolean): Html {
  return html`<div class="fields">
${input({ name: 'customer_id', label: 'Customer', hint: 'Type its ID, or pick one from the list.', state, required: true, attrs: html`list="customer-options" autocomplete="off" maxlength="100" spellcheck="false"` })}
${input({
    name: 'currency',
    label: 'Currency',
    hint: editing ? 'Line amounts keep their smallest units: check them after a change.' : 'Three letters, like usd or eur.',
    state,
    required: true,
    attrs: html`list="currency-options" autocomplete="off" maxlength="3" spellcheck="false"`,
  })}
${input({ name: 'due_date', label: 'Due date (UTC)', type: 'datetime-local', hint: 'Optional. Reminders are planned from it.', state })}
</div>
${customerOptions(customers)}<datalist id="currency-options">${CURRENCIES.map((c) => html`<option value="${c}"></option>`)}</datalist>
${input({ name: 'description', label: 'Description', hint: 'Shown to the customer on the invoice.', state, multiline: true, attrs: html`maxlength="1000"` })}
<fieldset><legend>Partial payments</legend>
${checkbox('allow_partial_payments', 'Allow the customer to pay part of the amount due at a time', state)}
${input({ name: 'minimum_payment_cents', label: 'Minimum payment', hint: 'Optional: the least one partial payment may be, like 20.00.', state, attrs: html`inputmode="decimal" autocomplete="off"` })}
</fieldset>
${input({ name: 'metadata', label: 'Metadata', hint: 'One key=value per line, up to 20.', state, multiline: true })}`;
}

/** The error of a line's parameter beside the lines, when the problem is about `line_items` as a whole. */
function linesError(state: FormState): Html {
  return state.error?.param === 'line_items' ? html`<p class="field-error" id="line-items-error">${state.error.message}</p>` : html``;
}

/** Rows of line items: `line_items[row][name|quantity|amount]`, each row a group of three labelled fields. */
function lineRows(state: FormState, rows: readonly number[]): Html {
  return html`${rows.map(
    (row) => html`<fieldset class="line-row">
<legend>Line ${row + 1}</legend>
${input({ name: lineField(row, 'name'), id: `line-${row}-name`, label: 'Name', state, attrs: html`maxlength="250" autocomplete="off"` })}
${input({ name: lineField(row, 'quantity'), id: `line-${row}-quantity`, label: 'Quantity', state, attrs: html`inputmode="numeric" autocomplete="off" placeholder="1"` })}
${input({ name: lineField(row, 'amount'), id: `line-${row}-amount`, label: 'Unit amount', state, attrs: html`inputmode="decimal" autocomplete="off"` })}
</fieldset>`,
  )}`;
}

/** The fields a problem can be shown beside (`line_items` itself: above the rows). */
const lineNames = (rows: readonly number[]) => ['line_items', ...rows.flatMap((r) => [lineField(r, 'name'), lineField(r, 'quantity'), lineField(r, 'amount')])];
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

export function newInvoiceForm(state: FormState, customers: readonly BilledCustomer[], f: Forms): ShellPage {
  const rows = range(0, NEW_LINE_ROWS);
  return {
    section: 'invoices',
    title: 'New invoice',
    crumbs: [['Invoices', BASE]],
    body: card(
      null,
      html`${formError(state, [...DETAIL_FIELDS, ...lineNames(rows)])}
<p class="muted">The invoice is saved as a draft: you can still change it, then finalize or send it from its page.</p>
<form method="post" action="${BASE}" novalidate>
${f.hidden()}
${detailFields(state, customers, false)}
<h2>Line items</h2>
<p class="hint">Quantity and unit amount in the currency above (12.50). Empty lines are left out; add more lines on the draft's edit page.</p>
${linesError(state)}
${lineRows(state, rows)}
<div class="form-actions"><button type="submit" class="primary">Create draft</button><a href="${BASE}">Cancel</a></div>
</form>`,
    ),
  };
}

export interface EditView {
  inv: InvoiceRow;
  customers: readonly BilledCustomer[];
  details: FormState;
  lines: FormState;
  /** The first line of the lines form (a multiple of EDIT_LINE_ROWS). */
  from: number;
}

/** Links between the windows of a draft's lines, when it has more than one form of them. */
function windowLinks(inv: InvoiceRow, from: number, max: number): Html {
  const windows = range(0, Math.min(Math.floor(inv.line_items.length / EDIT_LINE_ROWS), Math.floor((max - 1) / EDIT_LINE_ROWS)) + 1).map((w) => w * EDIT_LINE_ROWS);
  if (windows.length < 2) return html``;
  return html`<nav class="pager" aria-label="Lines"><p class="muted">${windows.map(
    (w, i) => html`${i ? ' · ' : ''}${w === from ? html`<strong aria-current="page">Lines ${w + 1}–${w + EDIT_LINE_ROWS}</strong>` : html`<a href="${invoicePath(inv.id)}/edit?from=${w}#lines">Lines ${w + 1}–${w + EDIT_LINE_ROWS}</a>`}`,
  )}</p></nav>`;
}

export function editInvoiceForm(v: EditView, f: Forms, maxLines: number): ShellPage {
  const { inv } = v;
  const path = invoicePath(inv.id);
  const rows = range(v.from, EDIT_LINE_ROWS);
  return {
    section: 'invoices',
    title: `Edit ${titleOf(inv).toLowerCase()}`,
    crumbs: [['Invoices', BASE], [titleOf(inv), path]],
    body: html`${card(
      'Details',
      html`${formError(v.details, DETAIL_FIELDS)}
<form method="post" action="${path}" novalidate>
${f.hidden()}
${detailFields(v.details, v.customers, true)}
<div class="form-actions"><button type="submit" class="primary">Save details</button><a href="${path}">Cancel</a></div>
</form>`,
    )}${card(
      'Line items',
      html`${formError(v.lines, lineNames(rows))}
<p class="hint">Lines ${v.from + 1} to ${v.from + EDIT_LINE_ROWS} of the draft (${inv.line_items.length} in all), in ${inv.currency.toUpperCase()}. Clear a line's fields to remove it.</p>
${windowLinks(inv, v.from, maxLines)}
${linesError(v.lines)}
<form method="post" action="${path}/lines" novalidate>
${f.hidden()}<input type="hidden" name="from" value="${v.from}">
${lineRows(v.lines, rows)}
<div class="form-actions"><button type="submit" class="primary">Save lines</button><a href="${path}">Cancel</a></div>
</form>`,
      raw('id="lines"'),
    )}`,
  };
}
