/**
 * The periods of a report (issue 27, point 3): pure date arithmetic on UTC calendar days written
 * `YYYY-MM-DD`, and the sums of daily rollup rows per period. Days are UTC days; a week starts on
 * Monday (ISO 8601, as Postgres's date_trunc('week') counts); a month is the calendar month. The
 * first and last periods of a range may be partial: only the days of the range are counted in them.
 */
export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/** The most periods one report has: a year and a month of days, about 7 years of weeks, 33 years of months. */
export const MAX_PERIODS = 400;

const DAY_MS = 86_400_000;
export const DAY_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

/** Milliseconds at the start of a UTC day; NaN for anything that is not a real calendar day. */
export function dayMs(day: string): number {
  if (!DAY_FORMAT.test(day)) return NaN;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== day ? NaN : ms;
}

export const isDay = (v: string): boolean => !Number.isNaN(dayMs(v));
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const addDays = (day: string, n: number): string => dayOf(dayMs(day) + n * DAY_MS);

/** The first day of the period holding `day`. */
export function periodStart(day: string, interval: Interval): string {
  if (interval === 'day') return day;
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  const weekday = (new Date(dayMs(day)).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return addDays(day, -weekday);
}

/** The first day of the period after the one starting on `start`. */
export function nextPeriod(start: string, interval: Interval): string {
  if (interval === 'day') return addDays(start, 1);
  if (interval === 'week') return addDays(start, 7);
  const d = new Date(dayMs(start));
  return dayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

export interface Period {
  /** The period's first day (a Monday for weeks, the 1st for months), which may be before `from`. */
  start: string;
  /** The first day of the next period. */
  next: string;
}

/** The periods from the one holding `from` to the one holding `to` (both days included). */
export function periodsOf(from: string, to: string, interval: Interval): Period[] {
  const out: Period[] = [];
  for (let start = periodStart(from, interval); start <= to && out.length <= MAX_PERIODS; ) {
    const next = nextPeriod(start, interval);
    out.push({ start, next });
    start = next;
  }
  return out;
}

/** How many periods a range has, without listing more than MAX_PERIODS + 1 of them. */
export const periodCount = (from: string, to: string, interval: Interval): number => periodsOf(from, to, interval).length;

/** The figures of one day (a report_daily row), summed into periods and totals. */
export interface Figures {
  gross_cents: number;
  succeeded_count: number;
  failed_count: number;
  refunded_cents: number;
  refund_count: number;
  disputed_cents: number;
  dispute_count: number;
  dispute_won_cents: number;
  dispute_won_count: number;
  dispute_lost_cents: number;
  dispute_lost_count: number;
}

export const FIGURES = [
  'gross_cents',
  'succeeded_count',
  'failed_count',
  'refunded_cents',
  'refund_count',
  'disputed_cents',
  'dispute_count',
  'dispute_won_cents',
  'dispute_won_count',
  'dispute_lost_cents',
  'dispute_lost_count',
] as const satisfies ReadonlyArray<keyof Figures>;

export const zeroFigures = (): Figures => Object.fromEntries(FIGURES.map((f) => [f, 0])) as unknown as Figures;

export function addFigures(into: Figures, add: Figures): Figures {
  for (const f of FIGURES) into[f] += add[f];
  return into;
}

/** What money the account kept: there are no fees; a dispute takes its amount only once lost. */
export const netCents = (f: Figures): number => f.gross_cents - f.refunded_cents - f.dispute_lost_cents;

/** Succeeded among the payments that reached an outcome; null when none did. */
export const successRate = (f: Figures): number | null => {
  const done = f.succeeded_count + f.failed_count;
  return done === 0 ? null : f.succeeded_count / done;
};

export type DayRow = Figures & { currency: string; day: string };

export interface PeriodFigures extends Period {
  figures: Figures;
}

export interface CurrencyReport {
  currency: string;
  totals: Figures;
  periods: PeriodFigures[];
}

/**
 * The daily rows of a range summed per currency and period. Every period of the range is listed,
 * those without activity with zeros; days outside `from`..`to` are left out; currencies are never
 * added together. Currencies in alphabetical order (`currencies` lists those to show even empty).
 */
export function rollUp(rows: readonly DayRow[], from: string, to: string, interval: Interval, currencies: readonly string[] = []): CurrencyReport[] {
  const periods = periodsOf(from, to, interval);
  const byCurrency = new Map<string, CurrencyReport>();
  const reportOf = (currency: string): CurrencyReport => {
    let r = byCurrency.get(currency);
    if (!r) {
      r = { currency, totals: zeroFigures(), periods: periods.map((p) => ({ ...p, figures: zeroFigures() })) };
      byCurrency.set(currency, r);
    }
    return r;
  };
  for (const c of currencies) reportOf(c);
  const index = new Map(periods.map((p, i) => [p.start, i]));
  for (const row of rows) {
    if (row.day < from || row.day > to) continue;
    const i = index.get(periodStart(row.day, interval));
    if (i === undefined) continue;
    const r = reportOf(row.currency);
    addFigures(r.periods[i]!.figures, row);
    addFigures(r.totals, row);
  }
  return [...byCurrency.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}
