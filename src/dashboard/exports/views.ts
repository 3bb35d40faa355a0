import { DATASETS, type Dataset } from '../../exports/columns.ts';
import type { ExportRunRow } from '../../exports/store.ts';
import { html, raw, type Html } from '../../pages/html.ts';
import type { ShellPage } from '../layout.ts';
import { card, statusBadge, table, when, type Forms } from '../widgets.ts';

export const EXPORTS_PATH = '/dashboard/exports';

const LABELS: Record<Dataset, string> = {
  payments: 'Payments',
  refunds: 'Refunds',
  disputes: 'Disputes',
  customers: 'Customers',
  invoices: 'Invoices',
  'installment-parts': 'Installment parts',
};

export interface ExportForm {
  dataset: Dataset;
  from: string;
  to: string;
  status: string;
  error: { message: string; param: string | undefined } | null;
}

const fieldError = (f: ExportForm, name: string) =>
  f.error && f.error.param === name ? html`<p class="field-error" id="${name}-error" role="alert">${f.error.message}</p>` : '';
const invalid = (f: ExportForm, name: string) => (f.error && f.error.param === name ? raw(` aria-invalid="true" aria-describedby="${name}-error"`) : '');

const day = (s: number | undefined) => (s === undefined ? '…' : new Date(s * 1000).toISOString().slice(0, 10));
/** The range of a run in UTC days, as typed (the end is excluded, so the day before it is the last). */
const rangeOf = (r: ExportRunRow) =>
  `${day(r.filters.created_gte)} to ${r.filters.created_lt === undefined ? '…' : day(r.filters.created_lt - 86_400)}${r.filters.status ? `, ${r.filters.status.toUpperCase()}` : ''}`;
const size = (bytes: number | null) => (bytes === null ? '' : Number(bytes) < 1e6 ? `${Math.ceil(Number(bytes) / 1e3)} kB` : `${(Number(bytes) / 1e6).toFixed(1)} MB`);

function runsTable(runs: readonly ExportRunRow[]): Html {
  return table<ExportRunRow>(
    [
      { label: 'Started', cell: (r) => when(r.created_at) },
      { label: 'Records', cell: (r) => LABELS[r.dataset] },
      { label: 'Range (UTC days)', cell: (r) => rangeOf(r) },
      { label: 'Status', cell: (r) => statusBadge(r.status) },
      { label: 'Rows', cell: (r) => (r.row_count === null ? '' : Number(r.row_count).toLocaleString('en-US')), num: true },
      {
        label: 'File',
        cell: (r) =>
          r.status === 'SUCCEEDED'
            ? html`<a href="${EXPORTS_PATH}/runs/${r.id}/file" download aria-label="Download CSV of ${LABELS[r.dataset]}, ${rangeOf(r)}">Download CSV</a> <span class="muted">${size(r.byte_count)}</span>`
            : r.status === 'FAILED'
              ? (r.failure_message ?? 'Failed')
              : 'Being written…',
      },
      { label: 'Deleted after', cell: (r) => when(r.expires_at) },
    ],
    runs,
    null,
    'No exports yet.',
  );
}

/** The export form (what, from which day to which, UTC, and a status) and the mode's newest export runs. */
export function exportsPage(f: ExportForm, runs: readonly ExportRunRow[], notice: Html | string, forms: Forms): ShellPage {
  return {
    section: 'exports',
    title: 'Exports',
    body: html`${notice}${card(
      null,
      html`<p class="muted">A CSV file of this mode's records created in the range, oldest first, written in the background: it is listed below, ready to download, once written. Days are UTC; the file gives times in UTC (ISO 8601) and every amount in the smallest currency unit and as a decimal. Columns: docs/exports.md.</p>
${f.error && !['dataset', 'created_gte', 'created_lt', 'status'].includes(f.error.param ?? '') ? html`<p class="field-error" role="alert">${f.error.message}</p>` : ''}
<form class="search-form" method="post" action="${EXPORTS_PATH}">${forms.hidden()}
<div class="field"><label for="export-dataset">Records</label>
<select id="export-dataset" name="dataset"${invalid(f, 'dataset')}>${DATASETS.map((d) => html`<option value="${d}"${d === f.dataset ? raw(' selected') : ''}>${LABELS[d]}</option>`)}</select>${fieldError(f, 'dataset')}</div>
<div class="field"><label for="export-from">From (UTC day, included)</label>
<input id="export-from" type="date" name="from" value="${f.from}"${invalid(f, 'created_gte')}>${fieldError(f, 'created_gte')}</div>
<div class="field"><label for="export-to">To (UTC day, included)</label>
<input id="export-to" type="date" name="to" value="${f.to}"${invalid(f, 'created_lt')}>${fieldError(f, 'created_lt')}</div>
<div class="field"><label for="export-status">Status (optional)</label>
<input id="export-status" name="status" value="${f.status}" placeholder="SUCCEEDED"${invalid(f, 'status')}>${fieldError(f, 'status')}</div>
<button type="submit" class="primary">Start export</button>
</form>`,
    )}${card('Recent exports', html`${runsTable(runs)}<p><a href="${EXPORTS_PATH}">Reload</a></p>`)}`,
  };
}
