import type { SessionRow } from '../../checkout/store.ts';
import type { CustomerRow } from '../../customers/store.ts';
import type { InvoiceRow } from '../../invoices/store.ts';
import { html, raw } from '../../pages/html.ts';
import type { PaymentRow } from '../../payments/store.ts';
import { RESOURCES, type Resource } from '../../search/fields.ts';
import type { SearchRows } from '../../search/store.ts';
import type { ShellPage } from '../layout.ts';
import { card, money, pager, statusBadge, table, when, type Column, type ListPage } from '../widgets.ts';

export const SEARCH_PATH = '/dashboard/search';

const LABELS: Record<Resource, string> = { payments: 'Payments', customers: 'Customers', invoices: 'Invoices', 'checkout-sessions': 'Checkout sessions' };
const nameOf = (c: CustomerRow) => [c.first_name, c.last_name].filter(Boolean).join(' ') || '—';

/** Each resource's columns and the page a result opens: the same pages as the sections' lists. */
const RESULTS: { [R in Resource]: { columns: Column<SearchRows[R]>[]; href: (row: SearchRows[R]) => string } } = {
  payments: {
    columns: [
      { label: 'Amount', cell: (p: PaymentRow) => money(p.amount_cents, p.currency) },
      { label: 'Status', cell: (p: PaymentRow) => statusBadge(p.status) },
      { label: 'Email', cell: (p: PaymentRow) => p.email ?? '—' },
      { label: 'Card', cell: (p: PaymentRow) => (p.card_last4 ? `•••• ${p.card_last4}` : '—') },
      { label: 'Created', cell: (p: PaymentRow) => when(p.created_at) },
    ],
    href: (p) => `/dashboard/payments/${p.id}`,
  },
  customers: {
    columns: [
      { label: 'Email', cell: (c: CustomerRow) => c.email },
      { label: 'Name', cell: nameOf },
      { label: 'Company', cell: (c: CustomerRow) => c.company_name ?? '—' },
      { label: 'Created', cell: (c: CustomerRow) => when(c.created_at) },
    ],
    href: (c) => `/dashboard/customers/${c.id}`,
  },
  invoices: {
    columns: [
      { label: 'Number', cell: (i: InvoiceRow) => i.number ?? 'Draft' },
      { label: 'Total', cell: (i: InvoiceRow) => money(i.total_cents, i.currency) },
      { label: 'Status', cell: (i: InvoiceRow) => statusBadge(i.status) },
      { label: 'Created', cell: (i: InvoiceRow) => when(i.created_at) },
    ],
    href: (i) => `/dashboard/invoices/${i.id}`,
  },
  'checkout-sessions': {
    columns: [
      { label: 'Amount', cell: (s: SessionRow) => money(s.amount_cents, s.currency) },
      { label: 'Status', cell: (s: SessionRow) => statusBadge(s.status) },
      { label: 'Email', cell: (s: SessionRow) => s.customer_email ?? '—' },
      { label: 'Created', cell: (s: SessionRow) => when(s.created_at) },
    ],
    href: (s) => `/dashboard/checkout-sessions/${s.id}`,
  },
};

export interface SearchView {
  query: string;
  resource: Resource;
  page: ListPage<SearchRows[Resource]> | null;
  wasCursor: boolean;
  /** The API's refusal of the query (its message names the position). */
  error: string | null;
}

const EXAMPLES = ['email:"ada@example.com"', 'amount>=4000 last4:4242', 'status:FAILED created>1767225600', 'metadata["order_id"]:"1042"', 'ada OR grace'];

/** The results page: the search box with the record type, then the results or the query's error beside the box. */
export function searchPage(v: SearchView): ShellPage {
  const results = v.page
    ? html`${table(RESULTS[v.resource].columns as Column<SearchRows[Resource]>[], v.page.rows, RESULTS[v.resource].href as (r: SearchRows[Resource]) => string, `No ${LABELS[v.resource].toLowerCase()} match this search.`)}
${pager(SEARCH_PATH, { q: v.query, in: v.resource }, v.page, v.wasCursor)}`
    : html``;
  return {
    section: 'search',
    title: v.query ? `Search: ${v.query}` : 'Search',
    body: html`${card(
      null,
      html`<form class="search-form" method="get" action="${SEARCH_PATH}" role="search">
<div class="field search-query"><label for="search-q">Search</label>
<input id="search-q" type="search" name="q" value="${v.query}" maxlength="1000" autocomplete="off" spellcheck="false" aria-describedby="search-help${v.error ? ' search-error' : ''}"${v.error ? raw(' aria-invalid="true"') : ''}>
${v.error ? html`<p class="field-error" id="search-error" role="alert">${v.error}</p>` : ''}</div>
<div class="field"><label for="search-in">In</label>
<select id="search-in" name="in">${RESOURCES.map((r) => html`<option value="${r}"${r === v.resource ? raw(' selected') : ''}>${LABELS[r]}</option>`)}</select></div>
<button type="submit" class="primary">Search</button>
</form>
<p class="muted" id="search-help">Fields and free text, combined with AND and OR. For example: ${EXAMPLES.map((e, i) => html`${i ? ', ' : ''}<code>${e}</code>`)}.</p>
${results}`,
    )}`,
  };
}
