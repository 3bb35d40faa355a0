import { html, type Html } from '../../pages/html.ts';
import { LINK_SOURCES, type LinkSource } from '../../payment-links/schema.ts';
import type { PaymentLinkRow, SourceTotals } from '../../payment-links/store.ts';
import type { ShellPage } from '../layout.ts';
import { metadataText } from '../forms.ts';
import {
  alertBox,
  badge,
  card,
  confirmPanel,
  copyable,
  facts,
  filterBar,
  buttonForm,
  money,
  pager,
  statusBadge,
  table,
  when,
  type Forms,
  type ListPage,
} from '../widgets.ts';

const BASE = '/dashboard/payment-links';
export const linkPath = (id: string): string => `${BASE}/${id}`;
const mono = (v: string) => html`<span class="mono">${v}</span>`;

/** What the dashboard calls a link: its internal name, else what payers read, else its id. */
export const linkLabel = (l: PaymentLinkRow): string => l.name ?? l.description ?? l.id;

/** The public URL of a link, and the one to share from `source` (`?src=` counts the views and payments there). */
export const publicUrl = (publicLinkUrl: string, l: PaymentLinkRow): string => `${publicLinkUrl}/${l.path}`;
export const sourceUrl = (url: string, source: LinkSource): string => (source === 'DIRECT' ? url : `${url}?src=${source}`);
/**
 * What the QR code holds: the link's page by its id, which never changes (a slug may), so a
 * printed code keeps working; `?src=QR` counts its scans under the QR source.
 */
export const qrUrl = (publicLinkUrl: string, l: PaymentLinkRow): string => sourceUrl(`${publicLinkUrl}/${l.id}`, 'QR');

const SOURCE_LABELS: Record<LinkSource, string> = { DIRECT: 'Direct', EMBED: 'Embedded', WHATSAPP: 'WhatsApp', QR: 'QR code' };
const TYPE_LABELS = { SINGLE: 'Single payment', MULTI: 'Many payments' } as const;

export interface LinkFilters {
  status?: string | undefined;
  type?: string | undefined;
}

export function linksList(page: ListPage<PaymentLinkRow>, filters: LinkFilters, wasCursor: boolean, notice: Html): ShellPage {
  const filtered = Object.values(filters).some(Boolean);
  return {
    section: 'payment-links',
    title: 'Payment links',
    actions: html`<a class="btn primary" href="${BASE}/new">New payment link</a>`,
    body: html`${notice}${card(
      null,
      html`${filterBar(BASE, [
        {
          kind: 'select',
          name: 'status',
          label: 'Status',
          value: filters.status,
          options: [
            { value: 'ACTIVE', label: 'Active' },
            { value: 'COMPLETED', label: 'Completed' },
            { value: 'CANCELLED', label: 'Cancelled' },
          ],
        },
        {
          kind: 'select',
          name: 'type',
          label: 'Type',
          value: filters.type,
          options: [
            { value: 'SINGLE', label: 'Single payment' },
            { value: 'MULTI', label: 'Many payments' },
          ],
        },
      ])}
${table<PaymentLinkRow>(
        [
          { label: 'Link', cell: linkLabel },
          { label: 'Amount', cell: (l) => money(l.amount_cents, l.currency), num: true },
          { label: 'Type', cell: (l) => TYPE_LABELS[l.type] },
          { label: 'Status', cell: (l) => statusBadge(l.status) },
          { label: 'Payments', cell: (l) => l.payment_count, num: true },
          { label: 'Collected', cell: (l) => money(l.total_collected_cents, l.currency), num: true },
          { label: 'Created', cell: (l) => html`<span class="nowrap">${when(l.created_at)}</span>` },
        ],
        page.rows,
        (l) => linkPath(l.id),
        filtered ? 'No payment link matches these filters.' : 'No payment links yet. Create one to take payments without writing code.',
      )}
${pager(BASE, { ...filters }, page, wasCursor)}`,
    )}`,
  };
}

export interface LinkView {
  link: PaymentLinkRow;
  bySource: SourceTotals[];
  publicLinkUrl: string;
  confirmCancel: boolean;
  notice: Html;
  /** The API's refusal of an action, shown above the link. */
  error?: string | null;
}

/** Views or amounts per source as labelled bars (a table beside them holds the same numbers). */
function bars(heading: string, rows: SourceTotals[], value: (s: SourceTotals) => number, text: (s: SourceTotals) => string): Html {
  const max = Math.max(1, ...rows.map(value));
  return html`<h3 class="bars-h">${heading}</h3><ul class="bars">${rows.map(
    (s) => html`<li><span>${SOURCE_LABELS[s.source]}</span><meter min="0" max="${max}" value="${value(s)}" aria-label="${heading}: ${SOURCE_LABELS[s.source]}">${text(s)}</meter><span class="num">${text(s)}</span></li>`,
  )}</ul>`;
}

function analytics(l: PaymentLinkRow, bySource: SourceTotals[]): Html {
  const rows = bySource;
  const sum = (k: 'views' | 'payments' | 'amount_collected_cents' | 'amount_refunded_cents') => rows.reduce((n, s) => n + s[k], 0);
  const m = (n: number) => money(n, l.currency);
  return card(
    'Analytics by source',
    html`<p class="muted">Views and successful payments by where the payer came from: the URLs by source above tell them apart.</p>
<div class="table-wrap"><table class="analytics">
<thead><tr><th scope="col">Source</th><th scope="col" class="num">Views</th><th scope="col" class="num">Payments</th><th scope="col" class="num">Collected</th><th scope="col" class="num">Refunded</th></tr></thead>
<tbody>${rows.map(
      (s) => html`<tr data-source="${s.source}"><th scope="row">${SOURCE_LABELS[s.source]}</th><td class="num">${s.views}</td><td class="num">${s.payments}</td><td class="num">${m(s.amount_collected_cents)}</td><td class="num">${m(s.amount_refunded_cents)}</td></tr>`,
    )}</tbody>
<tfoot><tr><th scope="row">All sources</th><td class="num">${sum('views')}</td><td class="num">${sum('payments')}</td><td class="num">${m(sum('amount_collected_cents'))}</td><td class="num">${m(sum('amount_refunded_cents'))}</td></tr></tfoot>
</table></div>
<div class="columns">
<div>${bars('Views', rows, (s) => s.views, (s) => String(s.views))}</div>
<div>${bars('Collected', rows, (s) => s.amount_collected_cents, (s) => m(s.amount_collected_cents))}</div>
</div>`,
  );
}

function share(l: PaymentLinkRow, url: string): Html {
  return card(
    'Share',
    html`<p class="label">Public URL</p>
${copyable(url, 'public URL', html`data-link-url`)}
<p><a href="${url}" target="_blank" rel="noopener">Open the link’s page</a> · <a href="https://wa.me/?text=${encodeURIComponent(sourceUrl(url, 'WHATSAPP'))}" target="_blank" rel="noopener">Share on WhatsApp</a></p>
<p class="label">URLs by source</p>
<p class="hint">Share the URL of each place you post the link: its views and payments are counted under that source.</p>
<dl class="facts">${LINK_SOURCES.map(
      (source) => html`<dt>${SOURCE_LABELS[source]}</dt><dd>${copyable(sourceUrl(url, source), `${SOURCE_LABELS[source]} URL`, html`data-source-url="${source}"`)}</dd>`,
    )}</dl>`,
  );
}

function qrCard(l: PaymentLinkRow, publicLinkUrl: string): Html {
  const qr = `${linkPath(l.id)}/qr.svg`;
  return card(
    'QR code',
    html`<img class="qr" src="${qr}" width="192" height="192" alt="QR code of ${qrUrl(publicLinkUrl, l)}">
<p class="muted">Scans open the link’s page and count under the QR code source. The code holds the link’s id, not its slug, so a printed code keeps working if the slug changes.</p>
<p><a class="btn small" href="${qr}?download=1" download="payment-link-${l.path}-qr.svg">Download QR code (SVG)</a></p>`,
  );
}

function totals(l: PaymentLinkRow): Html {
  const stat = (label: string, value: string, name: string) =>
    html`<li data-stat="${name}"><p class="stat-label">${label}</p><p class="stat">${value}</p></li>`;
  return card(
    'Totals',
    html`<ul class="stat-list totals">
${stat('Views', String(l.view_count), 'views')}
${stat('Payments', l.type === 'SINGLE' || l.quantity_limit === null ? String(l.payment_count) : `${l.payment_count} of ${l.quantity_limit}`, 'payments')}
${stat('Collected', money(l.total_collected_cents, l.currency), 'collected')}
</ul>
<p class="hint">Counted as payers come and pay: they may take a few seconds to catch up.</p>`,
  );
}

export function linkDetail(v: LinkView, f: Forms): ShellPage {
  const l = v.link;
  const path = linkPath(l.id);
  const url = publicUrl(v.publicLinkUrl, l);
  const actions = html`<a class="btn" href="${path}/edit">Edit</a>${
    l.status === 'ACTIVE' ? html`<a class="btn danger" href="${path}?confirm=cancel">Deactivate</a>` : ''
  }${l.status === 'CANCELLED' ? buttonForm(`${path}/reactivate`, f, 'Reactivate', { kind: 'primary' }) : ''}`;
  return {
    section: 'payment-links',
    title: linkLabel(l),
    crumbs: [['Payment links', BASE]],
    actions,
    body: html`${v.notice}${alertBox('error', v.error ?? null)}${v.confirmCancel && l.status === 'ACTIVE'
      ? confirmPanel({
          heading: 'Deactivate this payment link?',
          text: 'Its page will tell payers that the link has been deactivated and take no more payments. You can reactivate it later.',
          action: `${path}/cancel`,
          forms: f,
          button: 'Deactivate link',
          back: path,
        })
      : ''}${share(l, url)}<div class="columns">${qrCard(l, v.publicLinkUrl)}${totals(l)}</div>${analytics(l, v.bySource)}${card(
      'Details',
      facts([
        ['ID', mono(l.id)],
        ['Name (internal)', l.name],
        ['Description (shown to payers)', l.description],
        ['Status', statusBadge(l.status)],
        ['Type', TYPE_LABELS[l.type]],
        ['Amount', money(l.amount_cents, l.currency)],
        ['Currency', l.currency.toUpperCase()],
        ['Slug', l.slug ? mono(l.slug) : null],
        ['Customer', l.customer_id ? html`<a class="mono" href="/dashboard/customers/${l.customer_id}">${l.customer_id}</a>` : null],
        ['Asks the payer for', [l.collect_name && 'name', l.collect_email && 'email', l.collect_phone && 'phone'].filter(Boolean).join(', ') || 'Nothing'],
        ['Installments', l.installment_enabled ? badge('Allowed', 'info') : 'Not allowed'],
        ['Payment limit', l.type === 'SINGLE' ? '1 (single payment)' : l.quantity_limit === null ? 'No limit' : String(l.quantity_limit)],
        ['Expires', l.expires_at ? when(l.expires_at) : 'Never'],
        ['Metadata', Object.keys(l.metadata).length ? html`<span class="mono pre">${metadataText(l.metadata)}</span>` : null],
        ['Created', when(l.created_at)],
        ['Updated', when(l.updated_at)],
      ]),
    )}`,
  };
}
