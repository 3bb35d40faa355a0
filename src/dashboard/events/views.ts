import { EVENT_TYPES } from '../../events/catalogue.ts';
import { presentEvent, type ApiObject } from '../../events/presenter.ts';
import type { EventRow } from '../../events/store.ts';
import { html, raw, type Html } from '../../pages/html.ts';
import type { AttemptRow, DeliveryRow } from '../../webhooks/deliveries.ts';
import type { EndpointRow } from '../../webhooks/store.ts';
import type { ShellPage } from '../layout.ts';
import {
  alertBox,
  badge,
  card,
  copyable,
  facts,
  formError,
  jsonBlock,
  pager,
  select,
  statusBadge,
  table,
  when,
  type FormState,
  type Forms,
  type ListPage,
} from '../widgets.ts';

const BASE = '/dashboard/events';
export const eventPath = (id: string): string => `${BASE}/${id}`;

/** What the list's filter form holds: the type, and a day range typed as dates (UTC). */
export interface EventFilterValues {
  type?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** The kind of the object an event carries, as people read it: `checkout_session` → "Checkout session". */
export const kindOf = (o: { object?: unknown }): string => {
  const k = typeof o.object === 'string' ? o.object.replaceAll('_', ' ') : 'object';
  return k.charAt(0).toUpperCase() + k.slice(1);
};

/** The dashboard page of an object, when it has one: a refund or dispute links to its payment. */
export function objectPath(o: ApiObject & Record<string, unknown>): string | null {
  const pages: Array<[string, string]> = [
    ['cs_', '/dashboard/checkout-sessions/'],
    ['pay_', '/dashboard/payments/'],
    ['pl_', '/dashboard/payment-links/'],
    ['in_', '/dashboard/invoices/'],
    ['cus_', '/dashboard/customers/'],
  ];
  const id = String(o.id);
  for (const [prefix, path] of pages) if (id.startsWith(prefix)) return path + encodeURIComponent(id);
  const payment = o.payment_id;
  if ((id.startsWith('re_') || id.startsWith('dp_')) && typeof payment === 'string' && payment.startsWith('pay_')) {
    return `/dashboard/payments/${encodeURIComponent(payment)}`;
  }
  return null;
}

/** The filter form of the list: the type (from the catalogue) and a date range in UTC. */
function eventFilters(f: EventFilterValues): Html {
  const date = (name: 'from' | 'to', label: string) =>
    html`<div class="field"><label for="f-${name}">${label}</label><input type="date" id="f-${name}" name="${name}" value="${f[name] ?? ''}"></div>`;
  return html`<form class="filters" method="get" action="${BASE}" role="search">
<div class="field"><label for="f-type">Type</label>
<select id="f-type" name="type"><option value="">Any</option>${EVENT_TYPES.map(
    (t) => html`<option value="${t.type}"${t.type === f.type ? raw(' selected') : ''}>${t.type}</option>`,
  )}</select></div>
${date('from', 'From (UTC)')}
${date('to', 'To (UTC)')}
<button type="submit">Filter</button>${f.type || f.from || f.to ? html`<a class="btn" href="${BASE}">Clear</a>` : ''}
</form>`;
}

export function eventsList(page: ListPage<EventRow>, filters: EventFilterValues, pagerFilters: Record<string, string | undefined>, wasCursor: boolean): ShellPage {
  const filtered = !!(filters.type || filters.from || filters.to || pagerFilters['created[gte]'] || pagerFilters['created[lte]']);
  return {
    section: 'events',
    title: 'Events',
    body: card(
      null,
      html`<p class="muted intro">Everything that happened in your account, newest first: each event is what your webhook endpoints receive. Open one to see its payload, its deliveries and to send it again.</p>
${eventFilters(filters)}
${table<EventRow>(
        [
          // A break allowed after each dot, so a narrow column wraps a type between its words.
          { label: 'Type', cell: (e) => html`<span class="mono event-type">${e.type.split('.').map((w, i) => html`${i ? html`.<wbr>` : ''}${w}`)}</span>` },
          { label: 'Object', cell: (e) => html`${kindOf(e.data.object)} <span class="mono">${e.data.object.id}</span>` },
          { label: 'Created', cell: (e) => when(e.created_at) },
        ],
        page.rows,
        (e) => eventPath(e.id),
        filtered ? 'No event matches these filters.' : 'No events yet. They appear here as things happen: a session completes or expires, a payment succeeds or fails, a refund…',
      )}
${pager(BASE, pagerFilters, page, wasCursor)}`,
    ),
  };
}

/** What the event page shows about its deliveries: a page of them, each with its attempts and endpoint. */
export interface DeliveriesView {
  page: ListPage<DeliveryRow>;
  attempts: Map<string, AttemptRow[]>;
  wasCursor: boolean;
}

/** A sample sent by a test event (Webhooks): readable here by id, never listed, sent again only where it went. */
export const isSample = (e: EventRow): boolean => (e as { sample?: boolean }).sample === true;

export interface EventView {
  event: EventRow;
  sample: boolean;
  /** Every endpoint of the mode (at most 16): the URL of each delivery. */
  endpoints: EndpointRow[];
  /** The endpoints Resend to one endpoint offers: all of them, or for a sample the one it was sent to. */
  targets: EndpointRow[];
  /** How many endpoints Resend to all sends to now: those subscribed to the type (a sample: where it went). */
  subscribed: number;
  deliveries: DeliveriesView;
  notice: Html;
  /** The resend form as it came back with a problem, if it did. */
  form: FormState;
}

function objectFact(o: ApiObject & Record<string, unknown>): Html {
  const path = objectPath(o);
  const id = html`<span class="mono">${o.id}</span>`;
  const link = path ? html`<a href="${path}">${id}</a>` : id;
  const via = (o.id.startsWith('re_') || o.id.startsWith('dp_')) && path ? html` (of payment <span class="mono">${String(o.payment_id)}</span>)` : '';
  return html`${kindOf(o)} ${link}${via}`;
}

/**
 * A delivery's attempts. A table of its own rather than the shared one: each cell carries its
 * column's name, so that on a phone a row becomes a short list of labelled values (layout.ts).
 */
function attemptsTable(attempts: readonly AttemptRow[]): Html {
  if (!attempts.length) return html`<p class="muted">No attempt yet.</p>`;
  const code = (a: AttemptRow) =>
    a.status_code === null ? '—' : badge(String(a.status_code), a.status_code >= 200 && a.status_code < 300 ? 'good' : 'bad');
  return html`<div class="table-wrap"><table class="attempts">
<thead><tr><th scope="col" class="num">Attempt</th><th scope="col">Started</th><th scope="col" class="num">Status code</th><th scope="col" class="num">Duration</th><th scope="col">Error</th><th scope="col">Response</th></tr></thead>
<tbody>${attempts.map(
    (a) => html`<tr><td class="num" data-label="Attempt">${a.attempt}</td><td data-label="Started"><span class="nowrap">${when(a.started_at)}</span></td><td class="num" data-label="Status code">${code(a)}</td><td class="num" data-label="Duration">${a.duration_ms} ms</td><td data-label="Error">${a.error ?? '—'}</td><td data-label="Response">${a.response_body ? html`<code class="excerpt">${a.response_body}</code>` : '—'}</td></tr>`,
  )}</tbody>
</table></div>`;
}

function deliveryBlock(d: DeliveryRow, attempts: readonly AttemptRow[], endpoint: EndpointRow | undefined): Html {
  const target = endpoint
    ? html`<span class="mono">${endpoint.url}</span>`
    : html`<span class="muted">Deleted endpoint</span> <span class="mono">${d.endpoint_id}</span>`;
  return html`<section class="delivery" aria-label="Delivery ${d.id}" data-delivery="${d.id}">
<h3>${statusBadge(d.status)} ${target}</h3>
${facts([
    ['Delivery', html`<span class="mono">${d.id}</span>`],
    ['Created', when(d.created_at)],
    ['Attempts', String(d.attempt_count)],
    d.status === 'PENDING' && ['Next attempt', when(d.next_attempt_at)],
    d.status === 'PAUSED' && ['Waiting', 'The endpoint is disabled: this delivery is sent when it is enabled again.'],
    d.status === 'CANCELLED' && ['Cancelled', 'The endpoint was deleted before this delivery succeeded.'],
  ])}
${attemptsTable(attempts)}
</section>`;
}

const endpointLabel = (e: EndpointRow, type: string) => {
  const notes = [!e.is_active && 'disabled', !(e.enabled_events.includes('*') || e.enabled_events.includes(type)) && 'not subscribed'].filter(Boolean);
  return `${e.url}${notes.length ? ` (${notes.join(', ')})` : ''}`;
};

function resendCard(v: EventView, f: Forms): Html {
  const { event, targets: endpoints, subscribed } = v;
  const action = `${eventPath(event.id)}/resend`;
  const mode = event.livemode ? 'live' : 'test';
  const all = v.sample
    ? subscribed
      ? 'This is a sample sent by a test event: it is sent again only to the endpoint it was sent to.'
      : 'This is a sample sent by a test event, and the endpoint it was sent to is gone: it cannot be sent again.'
    : subscribed
      ? `Sends this event again, as a new delivery, to the ${subscribed === 1 ? 'endpoint' : `${subscribed} endpoints`} of ${mode} mode subscribed to ${event.type} now.`
      : `No endpoint of ${mode} mode is subscribed to ${event.type} now: resending to all creates no delivery.`;
  return card(
    'Resend',
    html`${formError(v.form, endpoints.length ? ['endpoint_id'] : [])}
<p class="muted">The same event (same id and payload) is signed afresh and sent as a new delivery; receivers that already have it can drop it by its id.</p>
<div class="resend">
<form method="post" action="${action}">${f.hidden()}<input type="hidden" name="to" value="all">
<p>${all}</p>
<button type="submit" class="primary">Resend to all subscribed endpoints</button>
</form>
${endpoints.length
  ? html`<form method="post" action="${action}">${f.hidden()}<input type="hidden" name="to" value="one">
${select({
    name: 'endpoint_id',
    label: 'Endpoint',
    state: v.form,
    options: endpoints.map((e) => ({ value: e.id, label: endpointLabel(e, event.type) })),
    id: 'resend-endpoint',
  })}
<button type="submit">Resend to one endpoint</button>
</form>`
  : html`<p class="muted">There are no webhook endpoints in ${mode} mode. <a href="/dashboard/webhooks">Add one in Webhooks</a>.</p>`}
</div>`,
    html`id="resend"`,
  );
}

export function eventDetail(v: EventView, f: Forms): ShellPage {
  const { event, deliveries } = v;
  const o = event.data.object as ApiObject & Record<string, unknown>;
  const byId = new Map(v.endpoints.map((e) => [e.id, e]));
  const rows = deliveries.page.rows;
  return {
    section: 'events',
    title: event.type,
    crumbs: [['Events', BASE]],
    body: html`${v.notice}${card(
      'Details',
      facts([
        ['ID', copyable(event.id, 'event ID')],
        ['Type', html`<span class="mono">${event.type}</span>`],
        ['Object', objectFact(o)],
        ['Created', when(event.created_at)],
        ['API version', html`<span class="mono">${event.api_version}</span>`],
        ['Mode', event.livemode ? badge('Live', 'good') : badge('Test', 'warn')],
        v.sample && ['Test event', html`${badge('Sample', 'info')} Sent by a test event from Webhooks: its object is made up, and it is not listed among your events.`],
      ]),
    )}${resendCard(v, f)}${card(
      'Deliveries',
      html`${rows.length
        ? rows.map((d) => deliveryBlock(d, deliveries.attempts.get(d.id) ?? [], byId.get(d.endpoint_id)))
        : html`<p class="empty">No delivery: no endpoint was subscribed to ${event.type} when this happened${v.sample ? '' : ', and it was not resent'}.</p>`}
${pager(eventPath(event.id), {}, deliveries.page, deliveries.wasCursor)}`,
      html`id="deliveries"`,
    )}${card('Payload', html`<p class="muted">The event exactly as the API answers it and as a webhook body carries it.</p>${jsonBlock(presentEvent(event))}`, html`id="payload"`)}`,
  };
}

/**
 * The notice after a resend (`?done=resent&count=N&paused=P`): how many deliveries were made, said
 * honestly when there were none.
 */
export function resendNotice(query: Record<string, unknown>, event: EventRow): Html {
  if (query.done !== 'resent') return html``;
  const { type, livemode } = event;
  const int = (v: unknown) => (typeof v === 'string' && /^\d{1,3}$/.test(v) ? Number(v) : null);
  const count = int(query.count);
  const paused = int(query.paused) ?? 0;
  if (count === null) return html``;
  if (count === 0 && isSample(event)) {
    return html`<div class="alert warn" role="status">Nothing was resent: the endpoint this sample was sent to no longer exists.</div>`;
  }
  if (count === 0) {
    return html`<div class="alert warn" role="status">Nothing was resent: no endpoint of ${livemode ? 'live' : 'test'} mode is subscribed to ${type}. Subscribe one in <a href="/dashboard/webhooks">Webhooks</a>, or resend to one endpoint.</div>`;
  }
  const made = count === 1 ? '1 new delivery was created' : `${count} new deliveries were created`;
  const waiting = paused ? ` ${paused === count ? (count === 1 ? 'It waits' : 'They wait') : `${paused} of them wait`} for a disabled endpoint to be enabled again.` : ' The first attempt starts at once.';
  return alertBox('success', `Event resent: ${made}.${waiting}`);
}
