import { csvLine, decimalAmount } from '../exports/csv.ts';
import { successRate, type Figures } from './buckets.ts';
import { presentFigures } from './presenter.ts';
import { periodEnd, type Report } from './service.ts';

/**
 * The CSV of each table of the reports page (issue 27, point 3), one currency each, with the
 * exports' cell rules (src/exports/csv.ts: RFC 4180, formula injection neutralised): amounts in
 * the smallest unit and as decimals, days in UTC. Small (a row per period), so built whole.
 */
export const REPORT_TABLES = ['volume', 'counts', 'declines'] as const;
export type ReportTable = (typeof REPORT_TABLES)[number];
export const isReportTable = (v: string): v is ReportTable => (REPORT_TABLES as readonly string[]).includes(v);

const AMOUNTS = [
  ['gross', 'gross_amount_cents'],
  ['refunded', 'refunded_amount_cents'],
  ['disputed', 'disputed_amount_cents'],
  ['dispute_lost', 'dispute_lost_amount_cents'],
  ['net', 'net_amount_cents'],
] as const;

const COUNTS = ['payment_count', 'succeeded_count', 'failed_count', 'refund_count', 'dispute_count', 'dispute_won_count', 'dispute_lost_count'] as const;

export function reportCsv(r: Report, table: ReportTable, currency: string): string {
  const c = r.currencies.find((x) => x.currency === currency);
  const periods = c?.periods ?? [];
  const startOf = (start: string) => (start < r.from ? r.from : start);
  if (table === 'declines') {
    const failed = c?.totals.failed_count ?? 0;
    return [
      csvLine(['currency', 'from', 'to', 'code', 'count', 'share_of_failed']),
      ...(c?.declines ?? []).map((d) => csvLine([currency, r.from, r.to, d.code, d.count, failed ? (d.count / failed).toFixed(4) : ''])),
    ].join('');
  }
  if (table === 'volume') {
    return [
      csvLine(['period_start', 'period_end', 'currency', ...AMOUNTS.flatMap(([name]) => [`${name}_amount_cents`, `${name}_amount`])]),
      ...periods.map((p) => {
        const f = presentFigures(p.figures);
        return csvLine([startOf(p.start), periodEnd(p.start, r.interval, r.to), currency, ...AMOUNTS.flatMap(([, key]) => [f[key], decimalAmount(f[key], currency)])]);
      }),
    ].join('');
  }
  const rate = (f: Figures) => {
    const v = successRate(f);
    return v === null ? '' : v.toFixed(4);
  };
  return [
    csvLine(['period_start', 'period_end', 'currency', ...COUNTS, 'success_rate']),
    ...periods.map((p) => {
      const f = presentFigures(p.figures);
      return csvLine([startOf(p.start), periodEnd(p.start, r.interval, r.to), currency, ...COUNTS.map((k) => f[k]), rate(p.figures)]);
    }),
  ].join('');
}

export const reportFileName = (table: ReportTable, currency: string, r: Report): string =>
  `report-${table}-${currency}-${r.livemode ? 'live' : 'test'}-${r.interval}-${r.from}-to-${r.to}.csv`;
