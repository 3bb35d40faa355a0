import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addMonths, dueDates, installmentOptionsSchema, optionsFor, schedule, splitAmount } from '../../src/lib/installments.ts';
import { nextAttemptAt, RETRY_OFFSETS } from '../../src/installments/charge.ts';
import { agreementText, planOffers, readPlanForm } from '../../src/installments/offer.ts';

const utc = (y: number, m: number, d: number, h = 10) => new Date(Date.UTC(y, m - 1, d, h));
const day = (d: Date) => d.toISOString().slice(0, 10);

describe('splitting a total into parts', () => {
  it('when 100.00 is split in 3, then the parts are 33.34, 33.33, 33.33: the remainder on the first', () => {
    expect(splitAmount(10000, 3)).toEqual([3334, 3333, 3333]);
    expect(splitAmount(10002, 4)).toEqual([2502, 2500, 2500, 2500]);
    expect(splitAmount(24, 24)).toEqual(Array(24).fill(1));
  });

  it('when any total is split in 2 to 24 parts, then they add up to it exactly, the first is the largest and the others equal', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 24 }), fc.integer({ min: 24, max: 99_999_999 }), (count, total) => {
        const parts = splitAmount(total, count);
        expect(parts).toHaveLength(count);
        expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
        expect(new Set(parts.slice(1)).size).toBe(1);
        expect(parts[0]! - parts[1]!).toBeGreaterThanOrEqual(0);
        expect(parts[0]! - parts[1]!).toBeLessThan(count);
      }),
      { seed: 16, numRuns: 500 },
    );
  });

  it('when a total cannot give every part at least 1, then it throws (the pages offer no such option)', () => {
    expect(() => splitAmount(2, 3)).toThrow();
    expect(optionsFor([{ count: 3, interval: 'month' }, { count: 12, interval: 'month' }], 10).map((o) => o.count)).toEqual([3]);
  });
});

describe('due dates', () => {
  it('when the first payment is on 31 January, then the next are on 28 (or 29) February, 31 March, 30 April: clamped, each counted from the first', () => {
    expect(dueDates(utc(2027, 1, 31), 4, 'month').map(day)).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30']);
    expect(dueDates(utc(2028, 1, 31), 3, 'month').map(day)).toEqual(['2028-01-31', '2028-02-29', '2028-03-31']);
    expect(day(addMonths(utc(2027, 12, 15), 2))).toBe('2028-02-15');
    // The time of day is kept.
    expect(addMonths(utc(2027, 5, 31, 23), 1).toISOString()).toBe('2027-06-30T23:00:00.000Z');
  });

  it('when the interval is a week, then each part is 7 days after the one before', () => {
    expect(dueDates(utc(2027, 2, 26), 3, 'week').map(day)).toEqual(['2027-02-26', '2027-03-05', '2027-03-12']);
  });

  it('when a test interval in seconds is given, then it replaces the calendar', () => {
    const start = utc(2027, 1, 1);
    expect(dueDates(start, 3, 'month', 5).map((d) => d.getTime() - start.getTime())).toEqual([0, 5000, 10000]);
  });

  it('when a schedule is made, then it numbers the parts from 1 with their amounts and dates', () => {
    expect(schedule(1000, { count: 2, interval: 'month' }, utc(2027, 3, 1))).toEqual([
      { number: 1, amountCents: 500, dueAt: utc(2027, 3, 1) },
      { number: 2, amountCents: 500, dueAt: utc(2027, 4, 1) },
    ]);
  });
});

describe('options of a link or an invoice', () => {
  it.each([
    [[], 'must hold at least one option'],
    [[{ count: 1, interval: 'month' }], 'must be at least 2'],
    [[{ count: 25, interval: 'month' }], 'must be at most 24'],
    [[{ count: 3, interval: 'day' }], 'Invalid option'],
    [[{ count: 3.5, interval: 'month' }], 'must be an integer'],
    [[{ count: 3, interval: 'month' }, { count: 3, interval: 'month' }], 'must not repeat an option'],
    [Array.from({ length: 7 }, (_, i) => ({ count: i + 2, interval: 'week' })), 'holds at most 6 options'],
    [[{ count: 3, interval: 'month', extra: 1 }], 'Unrecognized key'],
  ])('when the options are %j, then they are refused (%s)', (options, message) => {
    const r = installmentOptionsSchema.safeParse(options);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toContain(message);
  });

  it('when the options are valid, then they are kept as given', () => {
    expect(installmentOptionsSchema.parse([{ count: 2, interval: 'week' }, { count: 24, interval: 'month' }])).toHaveLength(2);
  });
});

describe('the offer on a page and the choice posted back', () => {
  const now = utc(2027, 1, 31);
  const offers = planOffers({ total: 10000, currency: 'usd', options: null, merchant: 'Acme Pottery', testIntervalSeconds: null, now });

  it('when nothing is set, then the default is one plan of 3 monthly payments, with every amount and date in its authorisation', () => {
    expect(offers).toHaveLength(1);
    expect(offers[0]!.key).toBe('3-month');
    expect(offers[0]!.agreement).toBe(
      'I authorise Acme Pottery to charge my card $33.34 today and $33.33 on each of February 28, 2027 and March 31, 2027, ' +
        'and to keep my card with its payment processor for these payments until the plan is paid or cancelled.',
    );
  });

  it('when the later parts differ, then each amount is named with its date', () => {
    const parts = [
      { number: 1, amountCents: 500, dueAt: now },
      { number: 2, amountCents: 300, dueAt: utc(2027, 2, 7) },
      { number: 3, amountCents: 200, dueAt: utc(2027, 2, 14) },
    ];
    expect(agreementText(null, 'eur', parts, false)).toContain('€5.00 today and €3.00 on February 7, 2027 and €2.00 on February 14, 2027');
  });

  it('when the form is read, then full is the default, an unknown plan and a missing tick are errors', () => {
    expect(readPlanForm({ plan: '', agree: false }, offers)).toEqual({ full: true });
    expect(readPlanForm({ plan: 'full', agree: true }, offers)).toEqual({ full: true });
    expect(readPlanForm({ plan: '12-month', agree: true }, offers)).toEqual({ errors: { plan: 'Choose how you would like to pay.' } });
    expect(readPlanForm({ plan: '3-month', agree: false }, offers)).toMatchObject({ errors: { agree: expect.stringContaining('Tick the box') } });
    expect(readPlanForm({ plan: '3-month', agree: true }, offers)).toEqual({ offer: offers[0] });
  });
});

describe('the dunning schedule', () => {
  const first = utc(2027, 3, 1);
  it('when a part keeps failing, then it is retried 1, 3 and 5 days after its first failure, then no more', () => {
    const live = { livemode: true, test_retry_seconds: null };
    expect(RETRY_OFFSETS).toEqual([1, 3, 5]);
    expect([0, 1, 2, 3].map((k) => nextAttemptAt(live, first, k, first)?.toISOString() ?? null)).toEqual([
      utc(2027, 3, 2).toISOString(),
      utc(2027, 3, 4).toISOString(),
      utc(2027, 3, 6).toISOString(),
      null,
    ]);
  });

  it('when a retry runs late, then the next is never in the past; a test plan counts in its seconds, a live one never does', () => {
    const late = utc(2027, 3, 10);
    expect(nextAttemptAt({ livemode: true, test_retry_seconds: null }, first, 1, late)).toEqual(late);
    expect(nextAttemptAt({ livemode: false, test_retry_seconds: 2 }, first, 2, first)!.getTime() - first.getTime()).toBe(10_000);
    expect(nextAttemptAt({ livemode: true, test_retry_seconds: 2 }, first, 0, first)).toEqual(utc(2027, 3, 2));
  });
});

describe('a schedule, as properties', () => {
  // A fixed seed, so that a failure replays (fast-check prints the counterexample with it).
  it('when any total is scheduled in any allowed option, then the parts sum to the total, are numbered 1..n, and fall due in order from the anchor', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 24, max: 99_999_999 }),
        fc.integer({ min: 2, max: 24 }),
        fc.constantFrom('week', 'month' as const),
        fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.option(fc.integer({ min: 1, max: 86_400 }), { nil: null }),
        (total, count, interval, anchor, testSeconds) => {
          const parts = schedule(total, { count, interval }, anchor, testSeconds);
          expect(parts.map((p) => p.number)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
          expect(parts.reduce((a, p) => a + p.amountCents, 0)).toBe(total);
          expect(parts.every((p) => p.amountCents > 0)).toBe(true);
          expect(parts[0]!.dueAt.getTime()).toBe(anchor.getTime());
          for (let i = 1; i < count; i++) expect(parts[i]!.dueAt.getTime()).toBeGreaterThan(parts[i - 1]!.dueAt.getTime());
        },
      ),
      { seed: 24, numRuns: 300 },
    );
  });
});
