import { z } from 'zod';
import { currencySchema } from '../lib/currency.ts';
import { INTERVALS, isDay, MAX_PERIODS } from './buckets.ts';

const day = (description: string) =>
  z
    .string()
    .refine(isDay, 'must be a calendar day written YYYY-MM-DD (UTC)')
    .optional()
    .meta({ description, example: '2026-11-01' });

/** The query of `GET /v1/reports/summary` (docs/reports.md). */
export const ReportQuery = z.strictObject({
  interval: z
    .enum(INTERVALS)
    .default('day')
    .meta({ description: 'The length of each period: `day`, `week` (Monday to Sunday, ISO 8601) or `month` (calendar month). All in UTC. Default `day`.' }),
  from: day('The first day of the report, UTC, included. Default: 29 days before `to` (day), the Monday 11 weeks before (week), the first of the month 11 months before (month).'),
  to: day('The last day of the report, UTC, included. Default: today (UTC).'),
  currency: currencySchema.optional().meta({ description: 'Only this currency. Without it, every currency with activity in the range, each reported on its own (never added together).', example: 'usd' }),
});
export type ReportQuery = z.infer<typeof ReportQuery>;

export const REPORT_LIMIT_TEXT = `A report has at most ${MAX_PERIODS} periods.`;
