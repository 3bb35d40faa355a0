import type { Sql } from '../db/sql.ts';
import { ApiError } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { addDays, dayOf, MAX_PERIODS, nextPeriod, periodCount, periodStart, rollUp, type CurrencyReport, type Interval } from './buckets.ts';
import type { ReportQuery } from './schema.ts';
import { periodRows, topDeclines, type DeclineRow } from './store.ts';

/** How many decline reasons a report lists per currency. */
export const TOP_DECLINES = 5;

export interface ReportRange {
  interval: Interval;
  from: string;
  to: string;
  currency: string | undefined;
}

export interface Report extends ReportRange {
  livemode: boolean;
  currencies: Array<CurrencyReport & { declines: Array<Pick<DeclineRow, 'code' | 'count'>> }>;
}

/** The default first day: 30 days, 12 weeks or 12 months back from `to`, whole periods. */
function defaultFrom(to: string, interval: Interval): string {
  if (interval === 'day') return addDays(to, -29);
  if (interval === 'week') return addDays(periodStart(to, 'week'), -77);
  let start = periodStart(to, 'month');
  for (let i = 0; i < 11; i++) start = periodStart(addDays(start, -1), 'month');
  return start;
}

/** The query's range with its defaults, checked: `from` ≤ `to`, at most MAX_PERIODS periods. */
export function reportRange(q: ReportQuery, today: string = dayOf(Date.now())): ReportRange {
  const to = q.to ?? today;
  const from = q.from ?? defaultFrom(to, q.interval);
  if (from > to) throw new ApiError('parameter_invalid', `Invalid from: ${from} is after to (${to}).`, 'from');
  if (periodCount(from, to, q.interval) > MAX_PERIODS) {
    throw new ApiError('parameter_invalid', `Invalid from: a report by ${q.interval} has at most ${MAX_PERIODS} periods; choose a later from, or a longer interval.`, 'from');
  }
  return { interval: q.interval, from, to, currency: q.currency };
}

/**
 * A report of one account and mode, read from the rollups only (two indexed reads, whatever the
 * number of payments): each currency on its own, every period of the range, the top decline reasons.
 */
export async function buildReport(sql: Sql, o: Owner, range: ReportRange): Promise<Report> {
  const [rows, declines] = await Promise.all([
    periodRows(sql, o, range.from, range.to, range.currency, range.interval),
    topDeclines(sql, o, range.from, range.to, range.currency, TOP_DECLINES),
  ]);
  const currencies = rollUp(rows, range.from, range.to, range.interval, range.currency ? [range.currency] : []);
  return {
    ...range,
    livemode: o.livemode,
    currencies: currencies.map((c) => ({
      ...c,
      declines: declines.filter((d) => d.currency === c.currency).map(({ code, count }) => ({ code, count })),
    })),
  };
}

/** The last day of a period within the range (the range's `to` for a partial last period). */
export const periodEnd = (start: string, interval: Interval, to: string): string => {
  const last = addDays(nextPeriod(start, interval), -1);
  return last > to ? to : last;
};
