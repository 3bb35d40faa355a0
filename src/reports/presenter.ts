import { z } from 'zod';
import { amountCents, currencyCode, livemode, objectName } from '../lib/objects.ts';
import { INTERVALS, netCents, successRate, type Figures } from './buckets.ts';
import { periodEnd, type Report } from './service.ts';

const count = (description: string) => z.number().int().meta({ description, example: 42 });
const dayField = (description: string) => z.string().meta({ description: `${description} A UTC day, YYYY-MM-DD.`, example: '2026-11-01' });

const FIGURE_FIELDS = {
  gross_amount_cents: amountCents('Succeeded payments, before refunds and disputes.'),
  payment_count: count('Payments that reached an outcome: succeeded and failed.'),
  succeeded_count: count('Payments that succeeded.'),
  failed_count: count('Payments that failed (declined, abandoned, expired challenges).'),
  success_rate: z.number().nullable().meta({ description: 'succeeded_count / payment_count, from 0 to 1; null when no payment reached an outcome.', example: 0.95 }),
  refunded_amount_cents: amountCents('Refunds that succeeded, dated by the day they succeeded.'),
  refund_count: count('Refunds that succeeded.'),
  disputed_amount_cents: amountCents('Disputes opened, dated by the day they were recorded.'),
  dispute_count: count('Disputes opened.'),
  dispute_won_amount_cents: amountCents('Disputes won, dated by the day they were decided.'),
  dispute_won_count: count('Disputes won.'),
  dispute_lost_amount_cents: amountCents('Disputes lost, dated by the day they were decided.'),
  dispute_lost_count: count('Disputes lost.'),
  net_amount_cents: z.number().int().meta({ description: 'gross − refunded − disputes lost (the service charges no fees). May be negative.', example: 2300 }),
};

const PeriodObject = z
  .strictObject({ start: dayField('The first day of the period within the report.'), end: dayField('The last day of the period within the report.'), ...FIGURE_FIELDS })
  .meta({ id: 'report_period', description: 'The figures of one period (day, week or month) in one currency.' });

const CurrencyReportObject = z
  .strictObject({
    currency: currencyCode(),
    totals: z.strictObject(FIGURE_FIELDS).meta({ id: 'report_totals', description: 'The figures of the whole range in this currency.' }),
    periods: z.array(PeriodObject).meta({ description: 'Every period of the range, oldest first; a period without activity has zeros.' }),
    decline_reasons: z
      .array(z.strictObject({ code: z.string().meta({ description: 'The failure code of the payments.', example: 'card_declined' }), count: count('Failed payments with this code in the range.') }))
      .meta({ description: `The most frequent failure codes of the range, most first (at most 5).` }),
  })
  .meta({ id: 'report_currency', description: 'A report in one currency: amounts of different currencies are never added together.' });

export const ReportSummaryObject = z
  .strictObject({
    object: objectName('report_summary'),
    livemode: livemode(),
    interval: z.enum(INTERVALS).meta({ description: 'The length of each period. Weeks run Monday to Sunday (ISO 8601).' }),
    from: dayField('The first day of the report, included.'),
    to: dayField('The last day of the report, included.'),
    timezone: z.literal('UTC').meta({ description: 'Days, weeks and months are UTC.' }),
    currencies: z.array(CurrencyReportObject).meta({ description: 'One entry per currency with activity in the range (or the one asked for), alphabetical.' }),
  })
  .meta({ id: 'report_summary', description: 'Gross volume, refunds, disputes, net and counts per period and currency, read from the rollups (docs/reports.md).' });
export type ReportSummaryObject = z.infer<typeof ReportSummaryObject>;

export function presentFigures(f: Figures): z.infer<typeof CurrencyReportObject>['totals'] {
  return {
    gross_amount_cents: f.gross_cents,
    payment_count: f.succeeded_count + f.failed_count,
    succeeded_count: f.succeeded_count,
    failed_count: f.failed_count,
    success_rate: successRate(f),
    refunded_amount_cents: f.refunded_cents,
    refund_count: f.refund_count,
    disputed_amount_cents: f.disputed_cents,
    dispute_count: f.dispute_count,
    dispute_won_amount_cents: f.dispute_won_cents,
    dispute_won_count: f.dispute_won_count,
    dispute_lost_amount_cents: f.dispute_lost_cents,
    dispute_lost_count: f.dispute_lost_count,
    net_amount_cents: netCents(f),
  };
}

export function presentReport(r: Report): ReportSummaryObject {
  return {
    object: 'report_summary',
    livemode: r.livemode,
    interval: r.interval,
    from: r.from,
    to: r.to,
    timezone: 'UTC',
    currencies: r.currencies.map((c) => ({
      currency: c.currency,
      totals: presentFigures(c.totals),
      periods: c.periods.map((p) => ({ start: p.start < r.from ? r.from : p.start, end: periodEnd(p.start, r.interval, r.to), ...presentFigures(p.figures) })),
      decline_reasons: c.declines,
    })),
  };
}
