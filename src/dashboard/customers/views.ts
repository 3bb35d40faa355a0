import type { CustomerRow } from '../../customers/store.ts';
import { html, type Html } from '../../pages/html.ts';
import type { PaymentRow } from '../../payments/store.ts';
import type { ShellPage } from '../layout.ts';
import { metadataText } from '../forms.ts';
import {
  card,
  confirmPanel,
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

const BASE = '/dashboard/customers';
export const customerPath = (id: string): string => `${BASE}/${id}`;
const nameOf = (c: CustomerRow) => [c.first_name, c.last_name].filter(Boolean).join(' ') || '—';

export function customersList(page: ListPage<CustomerRow>, filters: { email?: string | undefined }, wasCursor: boolean, notice: Html): ShellPage {
  return {
    section: 'customers',
    title: 'Customers',
    actions: html`<a class="btn primary" href="${BASE}/new">New customer</a>`,
    body: html`${notice}${card(
      null,
      html`${filterBar(BASE, [{ kind: 'text', name: 'email', label: 'Email (exact)', value: filters.email, placeholder: 'name@example.com' }])}
${table<CustomerRow>(
        [
          { label: 'Email', cell: (c) => c.email },
          { label: 'Name', cell: nameOf },
          { label: 'Company', cell: (c) => c.company_name ?? '—' },
          { label: 'Created', cell: (c) => when(c.created_at) },
        ],
        page.rows,
        (c) => customerPath(c.id),
        filters.email ? 'No customer has this email.' : 'No customers yet. Create one, or create them through the API.',
      )}
${pager(BASE, filters, page, wasCursor)}`,
    )}`,
  };
}

export function customerDetail(c: CustomerRow, payments: PaymentRow[], f: Forms, notice: Html, confirmDelete: boolean): ShellPage {
  const path = customerPath(c.id);
  return {
    section: 'customers',
    title: nameOf(c) === '—' ? c.email : nameOf(c),
    crumbs: [['Customers', BASE]],
    actions: html`<a class="btn" href="${path}/edit">Edit</a><a class="btn danger" href="${path}?confirm=delete">Delete</a>`,
    body: html`${notice}${confirmDelete
      ? confirmPanel({
          heading: 'Delete this customer?',
          text: 'The customer is deleted for good. Payments and sessions keep their history but no longer point to it.',
          action: `${path}/delete`,
          forms: f,
          button: 'Delete customer',
          back: path,
        })
      : ''}${card(
      'Details',
      facts([
        ['ID', html`<span class="mono">${c.id}</span>`],
        ['Email', c.email],
        ['First name', c.first_name || null],
        ['Last name', c.last_name || null],
        ['Phone', c.phone],
        ['Company', c.company_name],
        ['Notes (internal)', c.notes],
        ['Metadata', Object.keys(c.metadata).length ? html`<span class="mono pre">${metadataText(c.metadata)}</span>` : null],
        ['Processor customer', c.processor_customer_id ? html`<span class="mono">${c.processor_customer_id}</span>` : null],
        ['Created', when(c.created_at)],
        ['Updated', when(c.updated_at)],
      ]),
    )}${card(
      'Recent payments',
      html`${table<PaymentRow>(
        [
          { label: 'Amount', cell: (p) => money(p.amount_cents, p.currency), num: true },
          { label: 'Status', cell: (p) => statusBadge(p.status) },
          { label: 'Description', cell: (p) => p.description ?? '—' },
          { label: 'Date', cell: (p) => when(p.created_at) },
        ],
        payments,
        (p) => `/dashboard/payments/${p.id}`,
        'No payments from this customer yet.',
      )}
<p><a href="/dashboard/payments?customer=${c.id}">All payments of this customer</a> · <a href="/dashboard/checkout-sessions?customer_id=${c.id}">Checkout sessions</a></p>`,
    )}`,
  };
}

export const CUSTOMER_FIELDS = ['email', 'first_name', 'last_name', 'phone', 'company_name', 'notes', 'metadata'] as const;

/** The form of a new customer, or of an existing one (`c`). */
export function customerForm(c: CustomerRow | null, state: FormState, f: Forms): ShellPage {
  const action = c ? customerPath(c.id) : BASE;
  return {
    section: 'customers',
    title: c ? `Edit ${c.email}` : 'New customer',
    crumbs: c ? [['Customers', BASE], [c.email, customerPath(c.id)]] : [['Customers', BASE]],
    body: card(
      null,
      html`${formError(state, CUSTOMER_FIELDS)}
<form method="post" action="${action}" novalidate>
${f.hidden()}
${input({ name: 'email', label: 'Email', type: 'email', state, required: true, attrs: html`autocomplete="off" maxlength="500"` })}
<div class="fields">
${input({ name: 'first_name', label: 'First name', state, attrs: html`maxlength="500"` })}
${input({ name: 'last_name', label: 'Last name', state, attrs: html`maxlength="500"` })}
${input({ name: 'phone', label: 'Phone', type: 'tel', state, attrs: html`maxlength="500"` })}
${input({ name: 'company_name', label: 'Company', state, attrs: html`maxlength="500"` })}
</div>
${input({ name: 'notes', label: 'Notes', hint: 'Internal: never shown to the customer.', state, multiline: true, attrs: html`maxlength="5000"` })}
${input({ name: 'metadata', label: 'Metadata', hint: 'One key=value per line, up to 20.', state, multiline: true })}
<div class="form-actions"><button type="submit" class="primary">${c ? 'Save changes' : 'Create customer'}</button><a href="${c ? customerPath(c.id) : BASE}">Cancel</a></div>
</form>`,
    ),
  };
}

