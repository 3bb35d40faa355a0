import { formatAmount } from '../../lib/currency.ts';
import { html, raw, type Html } from '../../pages/html.ts';
import { addDays, INTERVALS, netCents, nextPeriod, successRate, type Figures, type Interval } from '../../reports/buckets.ts';
import type { ReportTable } from '../../reports/csv.ts';
import { periodEnd, type Report } from '../../reports/service.ts';
import { barChart } from '../charts.ts';
import type { ShellPage } from '../layout.ts';
import { card, table } from '../widgets.ts';

export const REPORTS_PATH = '/dashboard/reports';

const GROSS = '#5046e5';
const OK = '#0b6b3a';
const BAD = '#b42318';
const REFUND = '#8a4500';

const INTERVAL_LABEL: Record<Interval, string> = { day: 'Day', week: 'Week (Monday to Sunday)', month: 'Month' };

export interface ReportForm {
  interval: string;
  from: string;
  to: string;
  currency: string;
  /** Every currency the account has figures in (the choice). */
  currencies: readonly string[];
  error: { message: string; param: string | undefined } | null;
}

export interface ReportView {
  form: ReportForm;
  report: Report | null;
  /** The role may download the tables (the `export` permission). */
  canDownload: boolean;
}

const fieldError = (f: ReportForm, name: string) =>
  f.error?.param === name ? html`<p class="field-error" id="report-${name}-error" role="alert">${f.error.message}</p>` : '';
const invalid = (f: ReportForm, name: string) => (f.error?.param === name ? raw(` aria-invalid="true" aria-describedby="report-${name}-error"`) : '');

function filters(f: ReportForm): Html {
  const known = ['interval', 'from', 'to', 'currency'];
  return html`${f.error && !known.includes(f.error.param ?? '') ? html`<p class="field-error" role="alert">${f.error.message}</p>` : ''}
<form class="filters" method="get" action="${REPORTS_PATH}" data-report-filters>
<div class="field"><label for="report-interval">Period</label>
<select id="report-interval" name="interval"${invalid(f, 'interval')}>${INTERVALS.map((i) => html`<option value="${i}"${i === f.interval ? raw(' selected') : ''}>${INTERVAL_LABEL[i]}</option>`)}</select>${fieldError(f, 'interval')}</div>
<div class="field"><label for="report-from">From (UTC day, included)</label>
<input id="report-from" type="date" name="from" value="${f.from}"${invalid(f, 'from')}>${fieldError(f, 'from')}</div>
<div class="field"><label for="report-to">To (UTC day, included)</label>
<input id="report-to" type="date" name="to" value="${f.to}"${invalid(f, 'to')}>${fieldError(f, 'to')}</div>
<div class="field"><label for="report-currency">Currency</label>
<select id="report-currency" name="currency"${invalid(f, 'currency')}><option value="">Every currency</option>${f.currencies.map(
    (c) => html`<option value="${c}"${c === f.currency ? raw(' selected') : ''}>${c.toUpperCase()}</option>`,
  )}</select>${fieldError(f, 'currency')}</div>
<button type="submit">Show</button>
</form>`;
}

const pct = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(1)} %`);

function periodName(start: string, r: Report): string {
  const first = start < r.from ? r.from : start;
  if (r.interval === 'day') return first;
  const end = periodEnd(start, r.interval, r.to);
  if (r.interval === 'week') return first;
  const whole = first === start && end === addDays(nextPeriod(start, 'month'), -1);
  return whole ? first.slice(0, 7) : `${first.slice(0, 7)} (${first.slice(8)}–${end.slice(8)})`;
}

function download(r: Report, t: ReportTable, currency: string, label: string): Html {
  const q = new URLSearchParams({ table: t, currency, interval: r.interval, from: r.from, to: r.to });
  return html`<p><a class="btn small" href="${REPORTS_PATH}/download?${q.toString()}" download data-download="${t}">Download ${label} (CSV)</a></p>`;
}

function stat(label: string, value: string, name: string, hint = ''): Html {
  return html`<section class="card" data-stat="${name}"><h3 class="stat-label">${label}</h3><p class="stat">${value}</p>${hint ? html`<p class="hint">${hint}</p>` : ''}</section>`;
}

/** The first column's heading: what a row is. */
const PERIOD_HEADING: Record<Interval, string> = { day: 'Day', week: 'Week from', month: 'Month' };

/** A chart under its own visible heading. */
const figure = (heading: string, chart: Html) => html`<h3 class="chart-heading">${heading}</h3>${chart}`;

/** Every period's name, worked out once per page (each period is named in four charts and two tables per currency). */
function periodNames(r: Report): (start: string) => string {
  const names = new Map<string, string>();
  return (start) => {
    let name = names.get(start);
    if (name === undefined) names.set(start, (name = periodName(start, r)));
    return name;
  };
}

function currencyReport(r: Report, c: Report['currencies'][number], canDownload: boolean, nameOf: (start: string) => string): Html {
  const cur = c.currency;
  const CUR = cur.toUpperCase();
  // Each amount is formatted once: a period's figures show in a chart's labels and again in a table.
  const formatted = new Map<number, string>();
  const m = (v: number) => {
    let text = formatted.get(v);
    if (text === undefined) formatted.set(v, (text = formatAmount(v, cur)));
    return text;
  };
  const t = c.totals;
  const bars = (value: (f: Figures) => number, fill: string, what: string, fmt: (v: number) => string) =>
    c.periods.map((p) => ({ label: `${nameOf(p.start)}: ${what} ${fmt(value(p.figures))}`, segments: [{ value: value(p.figures), fill }], data: { period: p.start, value: value(p.figures) } }));
  const axis = [nameOf(c.periods[0]!.start), nameOf(c.periods.at(-1)!.start)] as const;
  const byPeriod = r.interval === 'day' ? 'per day' : r.interval === 'week' ? 'per week' : 'per month';

  const volumeChart = barChart({
    id: `gross-${cur}`,
    name: `gross-${cur}`,
    title: `Gross volume in ${CUR} ${byPeriod}, ${r.from} to ${r.to} (UTC): ${m(t.gross_cents)} in all`,
    desc: 'Succeeded payments, before refunds and disputes. The table below gives every figure.',
    bars: bars((f) => f.gross_cents, GROSS, 'gross', m),
    format: m,
    axis,
  });
  const volumeTable = table<Report['currencies'][number]['periods'][number]>(
    [
      { label: PERIOD_HEADING[r.interval], cell: (p) => nameOf(p.start) },
      { label: 'Gross', cell: (p) => m(p.figures.gross_cents), num: true },
      { label: 'Refunded', cell: (p) => m(p.figures.refunded_cents), num: true },
      { label: 'Disputed', cell: (p) => m(p.figures.disputed_cents), num: true },
      { label: 'Disputes lost', cell: (p) => m(p.figures.dispute_lost_cents), num: true },
      { label: 'Net', cell: (p) => m(netCents(p.figures)), num: true },
    ],
    c.periods,
    null,
    'No periods.',
  );
  const outChart = barChart({
    id: `out-${cur}`,
    name: `refunds-${cur}`,
    title: `Refunds and disputes lost in ${CUR} ${byPeriod}: ${m(t.refunded_cents)} refunded, ${m(t.dispute_lost_cents)} lost to disputes`,
    desc: 'Refunds (brown) and disputes lost (red), stacked.',
    bars: c.periods.map((p) => ({
      label: `${nameOf(p.start)}: refunded ${m(p.figures.refunded_cents)}, disputes lost ${m(p.figures.dispute_lost_cents)}`,
      segments: [
        { value: p.figures.refunded_cents, fill: REFUND },
        { value: p.figures.dispute_lost_cents, fill: BAD },
      ],
    })),
    format: m,
    axis,
  });
  const netChart = barChart({
    id: `net-${cur}`,
    name: `net-${cur}`,
    title: `Net in ${CUR} ${byPeriod}: ${m(netCents(t))} in all`,
    desc: 'Gross less refunds and disputes lost; a period that gave back more than it took hangs below the line.',
    bars: bars((f) => netCents(f), OK, 'net', m),
    format: m,
    axis,
  });
  const countsChart = barChart({
    id: `counts-${cur}`,
    name: `counts-${cur}`,
    title: `Payments in ${CUR} ${byPeriod}: ${t.succeeded_count} succeeded, ${t.failed_count} failed (${pct(successRate(t))} success rate)`,
    desc: 'Succeeded (green) and failed (red) payments, stacked.',
    bars: c.periods.map((p) => ({
      label: `${nameOf(p.start)}: ${p.figures.succeeded_count} succeeded, ${p.figures.failed_count} failed`,
      segments: [
        { value: p.figures.succeeded_count, fill: OK },
        { value: p.figures.failed_count, fill: BAD },
      ],
    })),
    format: String,
    axis,
  });
  const countsTable = table<Report['currencies'][number]['periods'][number]>(
    [
      { label: PERIOD_HEADING[r.interval], cell: (p) => nameOf(p.start) },
      { label: 'Payments', cell: (p) => p.figures.succeeded_count + p.figures.failed_count, num: true },
      { label: 'Succeeded', cell: (p) => p.figures.succeeded_count, num: true },
      { label: 'Failed', cell: (p) => p.figures.failed_count, num: true },
      { label: 'Success rate', cell: (p) => pct(successRate(p.figures)), num: true },
      { label: 'Refunds', cell: (p) => p.figures.refund_count, num: true },
      { label: 'Disputes', cell: (p) => p.figures.dispute_count, num: true },
      { label: 'Won', cell: (p) => p.figures.dispute_won_count, num: true },
      { label: 'Lost', cell: (p) => p.figures.dispute_lost_count, num: true },
    ],
    c.periods,
    null,
    'No periods.',
  );
  const declinesChart = c.declines.length
    ? barChart({
        id: `declines-${cur}`,
        name: `declines-${cur}`,
        title: `Top decline reasons in ${CUR}, ${r.from} to ${r.to}`,
        desc: `The ${c.declines.length} most frequent failure codes, most first: ${c.declines.map((d) => `${d.code} ${d.count}`).join(', ')}.`,
        bars: c.declines.map((d) => ({ label: `${d.code}: ${d.count}`, segments: [{ value: d.count, fill: BAD }], data: { code: d.code, count: d.count } })),
        format: String,
        axis: [c.declines[0]!.code, c.declines.length > 1 ? c.declines.at(-1)!.code : ''],
      })
    : html``;
  const declinesTable = table(
    [
      { label: 'Reason (failure code)', cell: (d: { code: string; count: number }) => html`<code>${d.code}</code>` },
      { label: 'Payments', cell: (d) => d.count, num: true },
      { label: 'Share of failed', cell: (d) => pct(t.failed_count ? d.count / t.failed_count : null), num: true },
    ],
    c.declines,
    null,
    'No failed payments in this range.',
  );
  const csv = (tb: ReportTable, label: string) => (canDownload ? download(r, tb, cur, label) : '');
  return html`<section aria-labelledby="cur-${cur}" data-currency="${cur}" class="report-currency">
<h2 id="cur-${cur}">${CUR}</h2>
<div class="grid">
${stat('Gross volume', m(t.gross_cents), 'gross')}
${stat('Refunded', m(t.refunded_cents), 'refunded', `${t.refund_count} refunds`)}
${stat('Disputed', m(t.disputed_cents), 'disputed', `${t.dispute_count} opened · ${t.dispute_lost_count} lost (${m(t.dispute_lost_cents)})`)}
${stat('Net', m(netCents(t)), 'net', 'Gross − refunds − disputes lost')}
${stat('Success rate', pct(successRate(t)), 'success-rate', `${t.succeeded_count} succeeded · ${t.failed_count} failed`)}
</div>
${card(`Volume ${byPeriod}`, html`${figure('Gross volume', volumeChart)}${figure('Net', netChart)}${figure('Refunds and disputes lost', outChart)}<h3 class="chart-heading">Figures ${byPeriod}</h3>${volumeTable}${csv('volume', 'volume table')}`, html`data-table="volume"`)}
${card(`Payments ${byPeriod}`, html`${countsChart}${countsTable}${csv('counts', 'counts table')}`, html`data-table="counts"`)}
${card('Top decline reasons', html`${declinesChart}${declinesTable}${csv('declines', 'decline reasons')}`, html`data-table="declines"`)}
</section>`;
}

/** The reports page: the range form, then per currency the totals, the charts and their tables. */
export function reportsPage(v: ReportView): ShellPage {
  const r = v.report;
  const names = r ? periodNames(r) : (start: string) => start;
  const body = html`${card(
    null,
    html`<p class="muted">Figures of this mode from rollups kept with every payment, refund and dispute. Days, weeks (Monday to Sunday) and months are UTC; each currency is reported on its own, never added to another. Net is gross less refunds and disputes lost (the service charges no fees).</p>
${filters(v.form)}`,
  )}
${r
    ? r.currencies.length
      ? r.currencies.map((c) => currencyReport(r, c, v.canDownload, names))
      : html`<div class="card"><p class="empty">No payments, refunds or disputes from ${r.from} to ${r.to}.</p></div>`
    : ''}`;
  return { section: 'reports', title: 'Reports', body };
}
