import { z } from 'zod';

/**
 * What every component needs to know of an installment plan's schedule (issue 16): the options a
 * link or an invoice offers, how a total splits into parts and when each part is due. Pure, so
 * the pages that offer plans, the hosted checkout that shows "Payment 1 of N" and the installments
 * component that charges the parts compute the same amounts and dates.
 */

export const INSTALLMENT_INTERVALS = ['week', 'month'] as const;
export type InstallmentInterval = (typeof INSTALLMENT_INTERVALS)[number];

/** Bounds of a plan's number of parts: at least two (else it is a payment), at most 24 (two years monthly). */
export const MIN_INSTALLMENTS = 2;
export const MAX_INSTALLMENTS = 24;
/** At most this many options on one link or invoice (each is a radio button on the page). */
export const MAX_INSTALLMENT_OPTIONS = 6;

export interface InstallmentOption {
  count: number;
  interval: InstallmentInterval;
}

/** What a link or invoice offers when installments are on and no options were given. */
export const DEFAULT_INSTALLMENT_OPTIONS: readonly InstallmentOption[] = [{ count: 3, interval: 'month' }];

const optionSchema = z.strictObject({
  count: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(MIN_INSTALLMENTS, `must be at least ${MIN_INSTALLMENTS}`)
    .max(MAX_INSTALLMENTS, `must be at most ${MAX_INSTALLMENTS}`)
    .meta({ description: `How many payments, ${MIN_INSTALLMENTS} to ${MAX_INSTALLMENTS}; the first is paid at once.`, example: 3 }),
  interval: z.enum(INSTALLMENT_INTERVALS).meta({ description: 'Time between two payments: a calendar `week` or `month`.' }),
});

/** The `installment_options` of a link or invoice: distinct options, 1 to 6 of them. */
export const installmentOptionsSchema = z
  .array(optionSchema)
  .min(1, 'must hold at least one option')
  .max(MAX_INSTALLMENT_OPTIONS, `holds at most ${MAX_INSTALLMENT_OPTIONS} options`)
  .refine((opts) => new Set(opts.map((o) => `${o.count}-${o.interval}`)).size === opts.length, 'must not repeat an option')
  .meta({
    description: `The plans offered to the payer (count and interval), 1 to ${MAX_INSTALLMENT_OPTIONS} distinct options. Null: the default, one plan of 3 monthly payments.`,
    example: [{ count: 3, interval: 'month' }],
  });

/** One plan a link or an invoice offers, as their objects show it. */
export const InstallmentOptionObject = z
  .strictObject({
    count: z.number().int().meta({ description: 'How many payments; the first is paid at once.', example: 3 }),
    interval: z.enum(INSTALLMENT_INTERVALS).meta({ description: 'Time between two payments: a calendar `week` or `month`.' }),
  })
  .meta({ id: 'installment_option', description: 'A plan offered to the payer: how many payments, how far apart.' });

/** The options offered: the stored ones, or the default. */
export const effectiveOptions = (stored: readonly InstallmentOption[] | null): readonly InstallmentOption[] => stored ?? DEFAULT_INSTALLMENT_OPTIONS;

/** The options that can split `total`: every part must be at least 1 in the smallest unit. */
export const optionsFor = (stored: readonly InstallmentOption[] | null, total: number): InstallmentOption[] =>
  effectiveOptions(stored).filter((o) => o.count <= total);

/** The value of an option's radio button, and back: `3-month`. */
export const optionKey = (o: InstallmentOption): string => `${o.count}-${o.interval}`;

/**
 * Splits a total into `count` parts that add up to it exactly: equal parts of the total divided by
 * count, rounded down, and the remainder on the first part (10000 in 3: 3334, 3333, 3333).
 */
export function splitAmount(total: number, count: number): number[] {
  if (!Number.isSafeInteger(total) || total < count || count < 1) throw new Error(`cannot split ${total} into ${count} positive parts`);
  const base = Math.floor(total / count);
  return Array.from({ length: count }, (_, i) => (i === 0 ? total - base * (count - 1) : base));
}

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/**
 * `anchor` plus `months` calendar months (UTC), on the anchor's day of the month, or the last day of
 * a shorter month: 31 January gives 28 (or 29) February, 31 March, 30 April. Always counted from the
 * anchor, never from the previous date, so a clamped month does not drag the later ones.
 */
export function addMonths(anchor: Date, months: number): Date {
  const y = anchor.getUTCFullYear();
  const m = anchor.getUTCMonth() + months;
  const year = y + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()));
}

/**
 * When each part is due: the first at `anchor` (the first payment), each next one a calendar week
 * or month after the first (addMonths). `testIntervalSeconds` (test mode only, set by the caller)
 * replaces the interval with that many seconds.
 */
export function dueDates(anchor: Date, count: number, interval: InstallmentInterval, testIntervalSeconds: number | null = null): Date[] {
  return Array.from({ length: count }, (_, i) => {
    if (i === 0) return anchor;
    if (testIntervalSeconds) return new Date(anchor.getTime() + i * testIntervalSeconds * 1000);
    return interval === 'week' ? new Date(anchor.getTime() + i * 7 * 86_400_000) : addMonths(anchor, i);
  });
}

export interface ScheduledPart {
  number: number;
  amountCents: number;
  dueAt: Date;
}

/** The parts of a plan: numbers from 1, amounts (splitAmount) and due dates (dueDates). */
export function schedule(total: number, option: InstallmentOption, anchor: Date, testIntervalSeconds: number | null = null): ScheduledPart[] {
  const amounts = splitAmount(total, option.count);
  const dates = dueDates(anchor, option.count, option.interval, testIntervalSeconds);
  return amounts.map((amountCents, i) => ({ number: i + 1, amountCents, dueAt: dates[i]! }));
}

/** A due date as the payer reads it: a calendar date (UTC); with the time when a test plan's interval is in seconds. */
export function dueText(d: Date, shortened: boolean): string {
  if (shortened) return `${d.toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' })} UTC`;
  return d.toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' });
}

/**
 * The plan a payer chose on a link or invoice page, carried by the checkout session of its first
 * part (checkout_sessions.installment). The plan itself is created, with the id chosen here, when
 * that first part succeeds; an abandoned or declined first part leaves no plan.
 */
export interface PlanChoice {
  kind: 'plan';
  plan_id: string;
  count: number;
  interval: InstallmentInterval;
  total_cents: number;
  /** Test mode only (INSTALLMENT_TEST_*): the shortened interval and dunning step, in seconds. */
  test_interval_seconds: number | null;
  test_retry_seconds: number | null;
  /** The payer's email: the plan's customer is found (or created) by it, and its notices go there. */
  email: string;
  /** The authorisation the payer ticked, word for word as shown, when and from which address. */
  agreement: { text: string; agreed_at: string; ip: string | null };
}

/** A setup session that replaces the card of plan `plan_id` (the customer portal's card update). */
export interface CardUpdateChoice {
  kind: 'card_update';
  plan_id: string;
}

export type InstallmentChoice = PlanChoice | CardUpdateChoice;

export const isPlanChoice = (c: InstallmentChoice | null | undefined): c is PlanChoice => c?.kind === 'plan';
