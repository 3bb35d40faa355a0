import { EVENT_TYPES } from '../../events/catalogue.ts';
import { html, raw, type Html } from '../../pages/html.ts';
import type { AttemptRow, DeliveryStatus, EndpointDeliveryRow } from '../../webhooks/deliveries.ts';
import { healthStatus, maskedHeaders, type WebhookEndpointStats } from '../../webhooks/presenter.ts';
import { deliveryChart } from './chart.ts';
import { DELIVERY_STATUSES, MAX_ENDPOINTS } from '../../webhooks/schema.ts';
import type { EndpointRow } from '../../webhooks/store.ts';
import type { ShellPage } from '../layout.ts';
import {
  badge,
  buttonForm,
  card,
  checkbox,
  confirmPanel,
  copyable,
  facts,
  filterBar,
  formError,
  input,
  pager,
  select,
  statusBadge,
  table,
  when,
  type FormState,
  type Forms,
  type ListPage,
} from '../widgets.ts';

const BASE = '/dashboard/webhooks';
export const endpointPath = (id: string): string => `${BASE}/${id}`;
export const deliveriesPath = (id: string): string => `${BASE}/${id}/deliveries`;

/** What the pages show of an endpoint: never its secrets (they are shown once, by `secretShown`). */
export type EndpointView = Omit<EndpointRow, 'secret' | 'previous_secret'>;
export function withoutSecrets(row: EndpointRow): EndpointView {
  const { secret: _s, previous_secret: _p, ...rest } = row;
  // Custom header values are write-only: a page only ever has them masked.
  return { ...rest, headers: maskedHeaders(row.headers) };
}

const stateBadge = (e: EndpointView) => {
  const health = healthStatus(e);
  return statusBadge(health === 'disabled' ? 'DISABLED' : !e.is_active ? 'PAUSED' : health === 'failing' ? 'FAILING' : 'ACTIVE');
};

/**
 * The banner of an endpoint the service disabled (or is failing): why, since when, and what to do.
 * Shown on the endpoint's page, and once per such endpoint on the list.
 */
export function healthBanner(e: EndpointView): Html {
  const health = healthStatus(e);
  if (health === 'disabled') {
    return html`<div class="alert warn" role="alert" data-health-banner="disabled"><p><strong>${e.url} was disabled</strong> on ${when(e.disabled_at)}: every delivery to it failed since ${when(e.failing_since)} (${e.failed_attempts} failed attempts). Its events are held, none is lost. Fix the receiver, then resume the endpoint to send them.</p></div>`;
  }
  if (health === 'failing' && e.is_active) {
    return html`<div class="alert info" role="status" data-health-banner="failing"><p><strong>${e.url} is failing:</strong> every attempt since ${when(e.failing_since)} failed (${e.failed_attempts} so far). If none succeeds, the endpoint is disabled automatically and its events held.</p></div>`;
  }
  return html``;
}
const isAll = (events: readonly string[]) => events.includes('*');
const eventsText = (events: readonly string[]) => (isAll(events) ? 'All events' : events.length === 1 ? events[0]! : `${events.length} event types`);

/** The rotation still in progress: until when the replaced secret signs beside the new one. */
export const rotationUntil = (e: EndpointView, now = new Date()): Date | null =>
  e.previous_secret_expires_at && e.previous_secret_expires_at > now ? e.previous_secret_expires_at : null;

export function endpointsList(page: ListPage<EndpointView>, wasCursor: boolean, notice: Html): ShellPage {
  return {
    section: 'webhooks',
    title: 'Webhooks',
    actions: html`<a class="btn primary" href="${BASE}/new">Add endpoint</a>`,
    body: html`${notice}${page.rows.filter((e) => healthStatus(e) === 'disabled').map(healthBanner)}${card(
      null,
      html`<p class="muted wh-intro">Each endpoint receives the events it subscribes to, signed with its own secret. Up to ${MAX_ENDPOINTS} endpoints in each mode.</p>
${table<EndpointView>(
        [
          { label: 'URL', cell: (e) => html`<span class="mono wh-wide">${e.url}</span>` },
          { label: 'Description', cell: (e) => e.description ?? '—' },
          { label: 'Events', cell: (e) => eventsText(e.enabled_events) },
          { label: 'Status', cell: stateBadge },
          { label: 'Created', cell: (e) => html`<span class="nowrap">${when(e.created_at)}</span>` },
        ],
        page.rows,
        (e) => endpointPath(e.id),
        'No webhook endpoints yet. Add one to receive events at your server.',
      )}
${pager(BASE, {}, page, wasCursor)}`,
    )}`,
  };
}

/** The catalogue in name order, so that the types of one resource sit together. */
const BY_NAME = [...EVENT_TYPES].sort((x, y) => x.type.localeCompare(y.type));

/** The checkboxes of `enabled_events`: "All events (*)" then every type of the catalogue. */
function eventChecks(state: FormState, checked: readonly string[]): Html {
  const error = state.error?.param?.startsWith('enabled_events') ? state.error.message : null;
  const box = (value: string, label: Html, i: number) =>
    html`<label class="check" for="ev-${i}"><input type="checkbox" id="ev-${i}" name="enabled_events" value="${value}"${checked.includes(value) ? raw(' checked') : ''}>${label}</label>`;
  return html`<fieldset${error ? raw(' aria-invalid="true" aria-describedby="enabled_events-error"') : ''}><legend>Events to send</legend>
${box('*', html`<span><strong>All events (*)</strong> <span class="hint">every type, including types added later</span></span>`, 0)}
<div class="checks">${BY_NAME.map((t, i) => box(t.type, html`<span class="mono" title="${t.description}">${t.type}</span>`, i + 1))}</div>
${error ? html`<p class="field-error" id="enabled_events-error">${error}</p>` : ''}</fieldset>`;
}

export const ENDPOINT_FIELDS = ['url', 'description', 'enabled_events', 'rate_limit', 'ordered'] as const;

/** The form of a new endpoint, or of an existing one (`e`): url, description, events, throttle, ordering. */
export function endpointForm(e: EndpointView | null, state: FormState, checked: readonly string[], f: Forms): ShellPage {
  return {
    section: 'webhooks',
    title: e ? 'Edit endpoint' : 'Add a webhook endpoint',
    crumbs: e ? [['Webhooks', BASE], [e.url, endpointPath(e.id)]] : [['Webhooks', BASE]],
    body: card(
      null,
      html`${formError(state, ENDPOINT_FIELDS)}
<form method="post" action="${e ? endpointPath(e.id) : BASE}" novalidate>
${f.hidden()}
${input({ name: 'url', label: 'Endpoint URL', type: 'url', state, required: true, hint: f.livemode
  ? 'A public https:// address of your server, such as https://example.com/webhooks. For your own machine, use payments-service listen with a test key.'
  : 'A public https:// address of your server, such as https://example.com/webhooks. In test mode a local address (http://localhost:4000/webhooks) is accepted where the service allows it (WEBHOOK_TEST_LOCAL_TARGETS); else use payments-service listen.', attrs: html`maxlength="2048" autocomplete="off" inputmode="url"` })}
${input({ name: 'description', label: 'Description', hint: 'Optional, for your team.', state, attrs: html`maxlength="500"` })}
${eventChecks(state, checked)}
${input({ name: 'rate_limit', label: 'Rate limit (deliveries per second)', hint: 'Optional, 1 to 1000: at most this many deliveries a second, for a small receiver. Empty: as fast as they come.', state, attrs: html`inputmode="numeric" pattern="[0-9]*" maxlength="4" autocomplete="off"` })}
<div class="field">${checkbox('ordered', 'Ordered: deliveries about the same object go one at a time, in event order', state)}
<p class="hint">Each waits until the one before succeeded or failed for good (up to about 10.5 hours of retries); other objects are not held.</p></div>
<div class="form-actions"><button type="submit" class="primary">${e ? 'Save changes' : 'Add endpoint'}</button><a href="${e ? endpointPath(e.id) : BASE}">Cancel</a></div>
</form>`,
    ),
  };
}

/**
 * The one page that shows a signing secret: the answer to a create or a rotation. A reload of the
 * form (the same idempotency key) goes to the endpoint's page, which never shows it.
 */
export function secretShown(e: EndpointView, secret: string, kind: 'created' | 'rotated'): ShellPage {
  const until = rotationUntil(e);
  return {
    section: 'webhooks',
    title: kind === 'created' ? 'Endpoint added' : 'Signing secret rotated',
    crumbs: [['Webhooks', BASE], [e.url, endpointPath(e.id)]],
    body: card(
      kind === 'created' ? 'Signing secret' : 'New signing secret',
      html`<div class="alert warn" role="status"><strong>Copy this signing secret now</strong> and keep it on your server: it is shown only once. If it is lost, rotate it to get a new one.</div>
${copyable(secret, 'the signing secret', html`data-secret`)}
<p class="muted">Your server checks the <code>Service-Signature</code> header of each request with it.${kind === 'rotated' && until ? html` The previous secret keeps signing beside this one until ${when(until)}, so that you can deploy the new one first.` : ''}</p>
${facts([
        ['Endpoint', html`<span class="mono">${e.url}</span>`],
        ['Events', isAll(e.enabled_events) ? 'All events (*)' : html`<span class="mono">${e.enabled_events.join(', ')}</span>`],
      ])}
<div class="form-actions wh-done"><a class="btn primary" href="${endpointPath(e.id)}">Done: go to the endpoint</a></div>`,
    ),
  };
}

export interface DetailView {
  e: EndpointView;
  recent: EndpointDeliveryRow[];
  attempts: Map<string, AttemptRow[]>;
  stats: WebhookEndpointStats;
  notice: Html;
  confirm: string;
  test: FormState;
}

const TYPE_OPTIONS = BY_NAME.map((t) => ({ value: t.type, label: t.type }));

export function endpointDetail(v: DetailView, f: Forms): ShellPage {
  const { e } = v;
  const path = endpointPath(e.id);
  const until = rotationUntil(e);
  const panel =
    v.confirm === 'delete'
      ? confirmPanel({
          heading: 'Delete this endpoint?',
          text: 'It stops receiving events at once; deliveries not yet made are cancelled. Its past deliveries stay visible on their events.',
          action: `${path}/delete`,
          forms: f,
          button: 'Delete endpoint',
          back: path,
        })
      : v.confirm === 'rotate'
        ? confirmPanel({
            heading: 'Rotate the signing secret?',
            text: 'A new secret is made and shown once. The current one keeps signing beside it for 24 hours, so that you can deploy the new one without missing an event.',
            action: `${path}/rotate-secret`,
            forms: f,
            button: 'Rotate secret',
            back: path,
          })
        : '';
  return {
    section: 'webhooks',
    title: e.description ?? e.url,
    crumbs: [['Webhooks', BASE]],
    actions: html`<a class="btn" href="${path}/edit">Edit</a>${buttonForm(`${path}/${e.is_active ? 'pause' : 'resume'}`, f, e.is_active ? 'Pause' : 'Resume')}<a class="btn" href="${path}?confirm=rotate">Rotate secret</a><a class="btn danger" href="${path}?confirm=delete">Delete</a>`,
    body: html`${v.notice}${healthBanner(e)}${panel}${card(
      'Details',
      facts([
        ['URL', html`<span class="mono">${e.url}</span>`],
        ['ID', html`<span class="mono">${e.id}</span>`],
        ['Status', html`${stateBadge(e)}${e.is_active ? '' : html` <span class="muted">Events are held and sent when you resume it.</span>`}`],
        ['Description', e.description],
        [
          'Events',
          isAll(e.enabled_events) ? 'All events (*)' : html`<ul class="wh-list">${e.enabled_events.map((t) => html`<li class="mono">${t}</li>`)}</ul>`,
        ],
        [
          'Custom headers',
          Object.keys(e.headers).length
            ? html`<ul class="wh-list">${Object.entries(e.headers).map(([n, v]) => html`<li><span class="mono">${n}: ${v}</span></li>`)}</ul><span class="muted">Values are write-only; set them through the API (PATCH headers).</span>`
            : html`<span class="muted">None.</span>`,
        ],
        ['Rate limit', e.rate_limit === null ? html`<span class="muted">None.</span>` : `${e.rate_limit} deliveries per second`],
        ['Ordered', e.ordered ? 'Yes: deliveries about one object go one at a time, in event order' : 'No'],
        ['Signing secret', until ? html`Rotation in progress: the previous secret also signs until ${when(until)}.` : html`<span class="muted">Shown only when the endpoint is added or the secret rotated.</span>`],
        ['Created', when(e.created_at)],
        ['Updated', when(e.updated_at)],
      ]),
    )}${card('Deliveries, last 24 hours', deliveryChart(v.stats), html`id="stats"`)}${card('Send a test event', testForm(v, f), html`id="test"`)}${card(
      'Recent deliveries',
      html`${deliveriesTable(v.recent, v.attempts, 'No deliveries to this endpoint yet.')}
<p><a href="${deliveriesPath(e.id)}">All deliveries</a> · <a href="${deliveriesPath(e.id)}?status=FAILED">Failed deliveries</a></p>`,
    )}`,
  };
}

function testForm(v: DetailView, f: Forms): Html {
  const path = endpointPath(v.e.id);
  if (!v.e.is_active && !v.test.error) return html`<p class="muted">This endpoint is paused: resume it to send a test event.</p>`;
  return html`<p class="muted">Sends a sample event of the type chosen to this endpoint only, signed like any event. Its object is complete but made up: every id in it has zeros for its time part (like <span class="mono">pay_0000000000000…</span>) and matches no record. It is not listed among your events.</p>
${formError(v.test, ['type'])}
<form method="post" action="${path}/test" novalidate>
${f.hidden()}
${select({ name: 'type', label: 'Event type', state: { values: { type: 'payment.succeeded', ...v.test.values }, error: v.test.error ?? null }, options: TYPE_OPTIONS })}
<div class="form-actions"><button type="submit" class="primary">Send test event</button></div>
</form>`;
}

const lastAttempt = (attempts: readonly AttemptRow[] | undefined) => attempts?.at(-1);

function deliveriesTable(rows: readonly EndpointDeliveryRow[], attempts: Map<string, AttemptRow[]>, empty: string): Html {
  return table<EndpointDeliveryRow>(
    [
      {
        label: 'Event',
        cell: (d) => html`<span class="wh-wide"><span class="mono">${d.event_type}</span>${d.event_sample ? html` ${badge('Test event', 'info')}` : ''}<br><span class="mono muted">${d.event_id}</span></span>`,
      },
      { label: 'Status', cell: (d) => statusBadge(d.status) },
      { label: 'Attempts', cell: (d) => d.attempt_count, num: true },
      {
        label: 'Last answer',
        cell: (d) => {
          const a = lastAttempt(attempts.get(d.id));
          if (!a) return '—';
          return a.status_code !== null ? html`<span class="mono">${a.status_code}</span>` : html`<span class="muted">${a.error ?? 'no answer'}</span>`;
        },
      },
      { label: 'Last attempt', cell: (d) => html`<span class="nowrap">${when(d.last_attempt_at)}</span>` },
    ],
    rows,
    (d) => `/dashboard/events/${d.event_id}`,
    empty,
  );
}

const STATUS_LABELS: Record<DeliveryStatus, string> = {
  PENDING: 'Pending',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  PAUSED: 'Paused',
  CANCELLED: 'Cancelled',
};

export interface DeliveriesView {
  e: EndpointView;
  page: ListPage<EndpointDeliveryRow>;
  attempts: Map<string, AttemptRow[]>;
  status: DeliveryStatus | undefined;
  wasCursor: boolean;
  notice: Html;
  retry: FormState;
}

/** An endpoint's deliveries, filtered by status (FAILED: the failed deliveries), and "retry all failed since…". */
export function deliveriesPage(v: DeliveriesView, f: Forms): ShellPage {
  const base = deliveriesPath(v.e.id);
  const failedView = v.status === 'FAILED';
  return {
    section: 'webhooks',
    title: failedView ? 'Failed deliveries' : 'Deliveries',
    crumbs: [['Webhooks', BASE], [v.e.description ?? v.e.url, endpointPath(v.e.id)]],
    body: html`${v.notice}${card(
      null,
      html`<p class="muted wh-intro">To <span class="mono">${v.e.url}</span>, newest first. Each delivery is tried up to 7 times over about 10 hours before it is marked failed.</p>
${filterBar(base, [{ kind: 'select', name: 'status', label: 'Status', options: DELIVERY_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] })), value: v.status }])}
${deliveriesTable(v.page.rows, v.attempts, v.status ? `No ${STATUS_LABELS[v.status].toLowerCase()} deliveries to this endpoint.` : 'No deliveries to this endpoint yet.')}
${pager(base, { status: v.status }, v.page, v.wasCursor)}`,
    )}${card(
      'Retry failed deliveries',
      html`<p class="muted">Sends again, as new deliveries, the events whose last delivery to this endpoint failed and was made at or after the time below (UTC). Each is sent once: retrying again does not resend what has already been resent.${v.e.is_active ? '' : ' The endpoint is paused: they are sent when you resume it.'}</p>
${formError(v.retry, ['since'])}
<form method="post" action="${endpointPath(v.e.id)}/retry-failed" novalidate>
${f.hidden()}
${input({ name: 'since', label: 'Failed since (UTC)', type: 'datetime-local', state: v.retry, required: true, attrs: html`class="wh-since"` })}
<div class="form-actions"><button type="submit" class="primary">Retry all failed since this time</button></div>
</form>`,
      html`id="retry"`,
    )}`,
  };
}
