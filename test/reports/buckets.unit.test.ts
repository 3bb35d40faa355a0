import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  FIGURES,
  isDay,
  MAX_PERIODS,
  netCents,
  nextPeriod,
  periodsOf,
  periodStart,
  rollUp,
  successRate,
  zeroFigures,
  type DayRow,
  type Interval,
} from '../../src/reports/buckets.ts';
import { reportRange } from '../../src/reports/service.ts';
import { ReportQuery } from '../../src/reports/schema.ts';

const day = fc.integer({ min: Date.UTC(2000, 0, 1) / 86_400_000, max: Date.UTC(2060, 0, 1) / 86_400_000 }).map((n) => new Date(n * 86_400_000).toISOString().slice(0, 10));
const interval = fc.constantFrom<Interval>('day', 'week', 'month');

describe('report periods (UTC days; weeks from Monday; calendar months)', () => {
  it('when days are written, then only real calendar days are accepted', () => {
    expect(['2026-02-28', '2024-02-29', '2026-12-31'].every(isDay)).toBe(true);
    expect(['2026-02-29', '2026-13-01', '2026-1-01', '2026-01-01T00:00:00Z', '', 'today'].some(isDay)).toBe(false);
  });

  it('when a day is placed in its week, then the week starts on the Monday on or before it', () => {
    expect(periodStart('2026-11-26', 'week')).toBe('2026-11-23'); // a Thursday
    expect(periodStart('2026-11-23', 'week')).toBe('2026-11-23'); // a Monday
    expect(periodStart('2026-11-29', 'week')).toBe('2026-11-23'); // a Sunday
    expect(periodStart('2027-01-01', 'week')).toBe('2026-12-28'); // across a year
    expect(periodStart('2026-11-26', 'month')).toBe('2026-11-01');
    expect(nextPeriod('2026-12-01', 'month')).toBe('2027-01-01');
    expect(nextPeriod('2024-02-01', 'month')).toBe('2024-03-01');
  });

  it('when any day is bucketed, then its period starts on or before it, the next starts after it, and a week start is a Monday', () => {
    fc.assert(
      fc.property(day, interval, (d, i) => {
        const start = periodStart(d, i);
        expect(start <= d).toBe(true);
        expect(nextPeriod(start, i) > d).toBe(true);
        expect(periodStart(start, i)).toBe(start);
        if (i === 'week') expect(new Date(`${start}T00:00:00Z`).getUTCDay()).toBe(1);
        if (i === 'month') expect(start.endsWith('-01')).toBe(true);
      }),
    );
  });

  it('when a range is cut into periods, then they are contiguous, cover every day of it and nothing else', () => {
    fc.assert(
      fc.property(day, fc.integer({ min: 0, max: 120 }), interval, (from, length, i) => {
        const to = addDays(from, length);
        const ps = periodsOf(from, to, i);
        expect(ps[0]!.start).toBe(periodStart(from, i));
        expect(ps.at(-1)!.start).toBe(periodStart(to, i));
        for (let k = 1; k < ps.length; k++) expect(ps[k]!.start).toBe(ps[k - 1]!.next);
      }),
    );
  });

  it('when daily rows are rolled up, then every period sums its own days, totals equal the sum of the days in range, and currencies stay apart', () => {
    const row = fc.record({ currency: fc.constantFrom('eur', 'usd', 'jpy'), offset: fc.integer({ min: -10, max: 100 }), gross: fc.integer({ min: 0, max: 1e7 }), ok: fc.nat(50), failed: fc.nat(50), refunded: fc.nat(1e5) });
    fc.assert(
      fc.property(day, fc.integer({ min: 0, max: 90 }), interval, fc.array(row, { maxLength: 60 }), (from, length, i, raw) => {
        const to = addDays(from, length);
        const rows: DayRow[] = raw.map((r) => ({ ...zeroFigures(), currency: r.currency, day: addDays(from, r.offset), gross_cents: r.gross, succeeded_count: r.ok, failed_count: r.failed, refunded_cents: r.refunded }));
        const out = rollUp(rows, from, to, i);
        const inRange = rows.filter((r) => r.day >= from && r.day <= to);
        for (const c of out) {
          const mine = inRange.filter((r) => r.currency === c.currency);
          for (const f of FIGURES) {
            expect(c.totals[f]).toBe(mine.reduce((a, r) => a + r[f], 0));
            expect(c.periods.reduce((a, p) => a + p.figures[f], 0)).toBe(c.totals[f]);
          }
          for (const p of c.periods) {
            expect(p.figures.gross_cents).toBe(mine.filter((r) => r.day >= p.start && r.day < p.next).reduce((a, r) => a + r.gross_cents, 0));
          }
        }
        expect(out.map((c) => c.currency)).toEqual([...new Set(inRange.map((r) => r.currency))].sort());
      }),
    );
  });

  it('when figures are summarised, then net is gross less refunds and disputes lost, and the success rate is null without outcomes', () => {
    const f = { ...zeroFigures(), gross_cents: 10_000, refunded_cents: 1500, disputed_cents: 4000, dispute_lost_cents: 3000, succeeded_count: 3, failed_count: 1 };
    expect(netCents(f)).toBe(5500);
    expect(successRate(f)).toBe(0.75);
    expect(successRate(zeroFigures())).toBeNull();
  });

  it('when the range is left out, then it defaults to 30 days, 12 whole weeks or 12 whole months ending today; a range of too many periods is refused', () => {
    const q = (v: Record<string, string>) => ReportQuery.parse(v);
    expect(reportRange(q({}), '2026-11-26')).toMatchObject({ interval: 'day', from: '2026-10-28', to: '2026-11-26' });
    expect(reportRange(q({ interval: 'week' }), '2026-11-26')).toMatchObject({ from: '2026-09-07', to: '2026-11-26' });
    expect(periodsOf('2026-09-07', '2026-11-26', 'week')).toHaveLength(12);
    expect(reportRange(q({ interval: 'month' }), '2026-11-26')).toMatchObject({ from: '2025-12-01', to: '2026-11-26' });
    expect(periodsOf('2025-12-01', '2026-11-26', 'month')).toHaveLength(12);
    expect(() => reportRange(q({ from: '2020-01-01', to: '2026-01-01' }))).toThrow(`at most ${MAX_PERIODS} periods`);
    expect(reportRange(q({ interval: 'month', from: '2000-01-01', to: '2026-01-01' })).interval).toBe('month');
  });
});
