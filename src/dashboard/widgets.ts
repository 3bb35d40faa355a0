import { emailStatus, LOGGED_NOTE } from '../email/presenter.ts';
import type { EmailRow } from '../email/store.ts';
import { formatAmount } from '../lib/currency.ts';
import { html, raw, type Html } from '../pages/html.ts';
import { alertBox } from '../pages/layout.ts';

/**
 * The pieces every dashboard page is made of: tables with a pager, filters, facts, badges, forms
 * with their errors. Pure functions of their arguments; everything interpolated is escaped.
 */

export { alertBox };

/** A time for people: `2026-11-25 13:04 UTC`. */
export const when = (d: Date | null | undefined): string => (d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—');

export const money = (amount: number, currency: string): string => formatAmount(amount, currency);

export type Tone = 'good' | 'bad' | 'warn' | 'info' | 'plain';

export const badge = (text: string, tone: Tone = 'plain'): Html => html`<span class="badge${tone === 'plain' ? '' : ` ${tone}`}">${text}</span>`;

/** A status badge, coloured by what the status means. */
export function statusBadge(status: string): Html {
  const tone: Record<string, Tone> = {
    SUCCEEDED: 'good', COMPLETE: 'good', PAID: 'good', ACTIVE: 'good', WON: 'good', SENT: 'good', COMPLETED: 'good',
    FAILED: 'bad', LOST: 'bad', VOID: 'bad', UNCOLLECTIBLE: 'bad', CANCELLED: 'plain', EXPIRED: 'plain', REVOKED: 'bad',
    PENDING: 'warn', OPEN: 'info', NEEDS_RESPONSE: 'warn', UNDER_REVIEW: 'info', PAUSED: 'warn', DRAFT: 'plain', DISPUTED: 'bad',
    REFUNDED: 'plain', 'PARTLY REFUNDED': 'warn', EXPIRING: 'warn', DISABLED: 'bad', FAILING: 'warn',
  };
  return badge(status.replaceAll('_', ' '), tone[status] ?? 'plain');
}

/** An email's status: LOGGED (SMTP_URL unset: nobody received it) says so beside its badge. */
export function emailStatusCell(e: Pick<EmailRow, 'status' | 'transport'>): Html {
  const status = emailStatus(e);
  return status === 'LOGGED' ? html`${badge('LOGGED', 'warn')} <span class="hint">${LOGGED_NOTE}</span>` : statusBadge(status);
}

/** A checkout session's line items (name, quantity, unit price, total), or a sentence when it has none. */
export function lineItemsTable(items: ReadonlyArray<{ name: string; quantity: number; amount: number }> | null, currency: string, amountCents: number): Html {
  if (!items?.length) return html`<p class="muted">No line items: the session charges its amount, ${money(amountCents, currency)}.</p>`;
  return table(
    [
      { label: 'Item', cell: (i) => i.name },
      { label: 'Quantity', cell: (i) => i.quantity, num: true },
      { label: 'Unit price', cell: (i) => money(i.amount, currency), num: true },
      { label: 'Total', cell: (i) => money(i.amount * i.quantity, currency), num: true },
    ],
    items,
    null,
    '',
  );
}

/**
 * A link to a customer's page, or (the customer was deleted since) its id with "deleted": never a
 * link to a 404. `known` holds the ids that still exist; `label` is what the link reads.
 */
export function customerRef(id: string, known: ReadonlySet<string>, label: string = id): Html {
  return known.has(id)
    ? html`<a${label === id ? raw(' class="mono"') : ''} href="/dashboard/customers/${id}">${label}</a>`
    : label === id
      ? html`<span class="mono">${id}</span> <span class="muted">(deleted)</span>`
      : html`${label} <span class="muted">(customer deleted)</span>`;
}

export interface Column<R> {
  label: string;
  cell: (row: R) => Html | string | number;
  /** Right-aligned (amounts). */
  num?: boolean;
}

/** A table of rows, or a sentence when there are none. The first column links to `href(row)`. */
export function table<R>(columns: Column<R>[], rows: readonly R[], href: ((row: R) => string) | null, empty: string): Html {
  if (!rows.length) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table>
<thead><tr>${columns.map((c) => html`<th scope="col"${c.num ? raw(' class="num"') : ''}>${c.label}</th>`)}</tr></thead>
<tbody>${rows.map(
    (r) => html`<tr>${columns.map((c, i) => {
      const value = c.cell(r);
      const content = i === 0 && href ? html`<a href="${href(r)}">${value}</a>` : value;
      return html`<td${c.num ? raw(' class="num"') : ''}>${content}</td>`;
    })}</tr>`,
  )}</tbody>
</table></div>`;
}

/** A page of a list as the API answers it: the rows (limit + 1 fetched) and the cursors used. */
export interface ListPage<R> {
  rows: R[];
  hasMore: boolean;
  backward: boolean;
  /** The page size asked for; the pager keeps it when it is not the API's default (10). */
  limit: number;
}

/** The `limit + 1` rows of a keyset query, newest first, as a page (the same rule as toList). */
export function toPage<R extends { id: string }>(rows: readonly R[], p: { limit: number; ending_before?: string | undefined }): ListPage<R> {
  const hasMore = rows.length > p.limit;
  const page = rows.slice(0, p.limit);
  const backward = p.ending_before !== undefined;
  if (backward) page.reverse();
  return { rows: page, hasMore, backward, limit: p.limit };
}

/**
 * "Newer" and "Older" links of a cursor-paged list, keeping its filters. Going forward, Older
 * exists when there is more; Newer exists once we moved off the first page. Going backward it is
 * the mirror image.
 */
export function pager<R extends { id: string }>(base: string, filters: Record<string, string | undefined>, page: ListPage<R>, wasCursor: boolean): Html {
  const first = page.rows[0];
  const last = page.rows.at(-1);
  const url = (cursor: Record<string, string>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
    if (page.limit !== 10 && !q.has('limit')) q.set('limit', String(page.limit));
    for (const [k, v] of Object.entries(cursor)) q.set(k, v);
    return `${base}?${q}`;
  };
  const newer = first && (page.backward ? page.hasMore : wasCursor) ? url({ ending_before: first.id }) : null;
  const older = last && (page.backward ? true : page.hasMore) ? url({ starting_after: last.id }) : null;
  if (!newer && !older) return html``;
  return html`<nav class="pager" aria-label="Pages">
${newer ? html`<a class="btn small" href="${newer}" rel="prev">← Newer</a>` : html`<span></span>`}
${older ? html`<a class="btn small" href="${older}" rel="next">Older →</a>` : html`<span></span>`}
</nav>`;
}

export interface SelectOption {
  value: string;
  label: string;
}

export type FilterField =
  | { kind: 'select'; name: string; label: string; options: SelectOption[]; value: string | undefined }
  | { kind: 'text'; name: string; label: string; value: string | undefined; placeholder?: string };

/** A GET form of filters above a list; "Any" leaves a select out. */
export function filterBar(action: string, fields: FilterField[]): Html {
  return html`<form class="filters" method="get" action="${action}" role="search">
${fields.map((f) =>
    f.kind === 'select'
      ? html`<div class="field"><label for="f-${f.name}">${f.label}</label>
<select id="f-${f.name}" name="${f.name}"><option value="">Any</option>${f.options.map(
          (o) => html`<option value="${o.value}"${o.value === f.value ? raw(' selected') : ''}>${o.label}</option>`,
        )}</select></div>`
      : html`<div class="field"><label for="f-${f.name}">${f.label}</label>
<input id="f-${f.name}" name="${f.name}" value="${f.value ?? ''}"${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}></div>`,
  )}
<button type="submit">Filter</button>
</form>`;
}

/** The filters of a list query that are set, as strings (for the pager's links). */
export function filterValues(q: Record<string, unknown>, names: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const n of names) out[n] = q[n] === undefined ? undefined : String(q[n]);
  return out;
}

/** Label and value pairs; a null value shows as a dash. */
export function facts(pairs: Array<[string, Html | string | number | null | undefined] | false | null>): Html {
  return html`<dl class="facts">${pairs.map((p) => (p ? html`<dt>${p[0]}</dt><dd>${p[1] ?? '—'}</dd>` : ''))}</dl>`;
}

export const card = (heading: string | null, body: Html, attrs: Html = html``): Html =>
  html`<section class="card" ${attrs}>${heading ? html`<h2>${heading}</h2>` : ''}${body}</section>`;

/** A value with a Copy button (dashboard.js); without the script the button stays hidden. */
export function copyable(value: string, label: string, attrs: Html = html``): Html {
  return html`<div class="secret"><code ${attrs}>${value}</code><button type="button" class="small" data-copy="${value}" aria-label="Copy ${label}" hidden>Copy</button><span class="sr-only" role="status" aria-live="polite"></span></div>`;
}

/**
 * A QR code of `text` as SVG, drawn here: no outside service sees what it encodes (an otpauth://
 * secret, a link). qrcode is loaded with the first one, not at start (test/structure/start-up).
 */
export const qrSvg = async (text: string, width?: number): Promise<string> =>
  (await import('qrcode')).toString(text, { type: 'svg', margin: 2, errorCorrectionLevel: 'M', ...(width ? { width } : {}) });

/** Pretty JSON in a scrolling block. */
export const jsonBlock = (value: unknown): Html => html`<pre tabindex="0"><code>${JSON.stringify(value, null, 2)}</code></pre>`;

/** What a form shows when it comes back: the values typed and the one problem found, if any. */
export interface FormState {
  values: Record<string, string>;
  error?: { message: string; param?: string | undefined } | null;
}

export const emptyForm = (values: Record<string, string> = {}): FormState => ({ values });

/** The error of a field, when the problem names it (`param` may name a sub-field: `metadata[x]`). */
function fieldError(state: FormState, name: string): string | null {
  const p = state.error?.param;
  if (!p) return null;
  return p === name || p.startsWith(`${name}[`) ? state.error!.message : null;
}

/** The form's problem at its top, unless a field shows it beside itself. */
export function formError(state: FormState, fieldNames: readonly string[]): Html {
  const e = state.error;
  if (!e) return html``;
  const shownBeside = e.param && fieldNames.some((n) => fieldError(state, n));
  return alertBox('error', shownBeside ? 'Please check the field marked below.' : e.message);
}

export interface InputOptions {
  name: string;
  label: string;
  state: FormState;
  type?: string;
  hint?: string;
  required?: boolean;
  attrs?: Html;
  /** A textarea instead of an input. */
  multiline?: boolean;
  /** The id of the element; `name` unless two forms of one page share a name. */
  id?: string;
}

/** A labelled input whose problem, if any, is named beside it and tied to it for screen readers. */
export function input(o: InputOptions): Html {
  const id = o.id ?? o.name;
  const error = fieldError(o.state, o.name);
  const value = o.state.values[o.name] ?? '';
  const described = [o.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = html`id="${id}" name="${o.name}"${o.required ? raw(' required') : ''}${error ? raw(' aria-invalid="true"') : ''}${described ? html` aria-describedby="${described}"` : ''} ${o.attrs ?? ''}`;
  return html`<div class="field"><label for="${id}">${o.label}</label>
${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}
${o.multiline ? html`<textarea ${common}>${value}</textarea>` : html`<input type="${o.type ?? 'text'}" ${common} value="${value}">`}
${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}</div>`;
}

export function select(o: { name: string; label: string; state: FormState; options: SelectOption[]; hint?: string; id?: string }): Html {
  const id = o.id ?? o.name;
  const error = fieldError(o.state, o.name);
  const value = o.state.values[o.name] ?? '';
  return html`<div class="field"><label for="${id}">${o.label}</label>
${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}
<select id="${id}" name="${o.name}"${error ? raw(' aria-invalid="true"') : ''}${o.hint || error ? html` aria-describedby="${[o.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')}"` : ''}>${o.options.map(
    (op) => html`<option value="${op.value}"${op.value === value ? raw(' selected') : ''}>${op.label}</option>`,
  )}</select>
${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}</div>`;
}

/** A checkbox; checked when the form's value is "on". */
export function checkbox(name: string, label: string, state: FormState, id = name): Html {
  return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="on"${state.values[name] === 'on' ? raw(' checked') : ''}>${label}</label>`;
}

/**
 * What a page's forms need (context.ts makes it per page): `hidden()` gives the fields every
 * dashboard form posts: the CSRF token, the mode the form was opened in, and a fresh idempotency
 * key, which makes a double click or a reload one action.
 */
export interface Forms {
  csrf: string;
  livemode: boolean;
  hidden(): Html;
}

export function formsOf(csrf: string, livemode: boolean, newKey: () => string): Forms {
  return {
    csrf,
    livemode,
    hidden: () =>
      html`<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="form_mode" value="${livemode ? 'live' : 'test'}"><input type="hidden" name="idempotency_key" value="${newKey()}">`,
  };
}

/**
 * A form of one button (pause, resume, expire, revoke…). The idempotency key makes a double
 * click one action.
 */
export function buttonForm(action: string, f: Forms, label: string, opts: { kind?: 'primary' | 'danger' | ''; fields?: Record<string, string>; small?: boolean } = {}): Html {
  const cls = [opts.kind ?? '', opts.small ? 'small' : ''].filter(Boolean).join(' ');
  return html`<form class="inline" method="post" action="${action}">${f.hidden()}${Object.entries(opts.fields ?? {}).map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  )}<button type="submit"${cls ? html` class="${cls}"` : ''}>${label}</button></form>`;
}

/**
 * The confirmation of an action that cannot be undone, shown on the record's page when its URL
 * asks for it (`?confirm=…`): what will happen, the final button, and a way back.
 */
export function confirmPanel(o: { heading: string; text: string | Html; action: string; forms: Forms; button: string; back: string; extra?: Html }): Html {
  return html`<section class="card confirm" aria-labelledby="confirm-h" role="region">
<h2 id="confirm-h">${o.heading}</h2>
<p>${o.text}</p>
<form method="post" action="${o.action}">${o.forms.hidden()}${o.extra ?? ''}
<div class="form-actions"><button type="submit" class="danger">${o.button}</button><a href="${o.back}">Cancel</a></div>
</form></section>`;
}
