import { z } from 'zod';
import { formatAmount } from '../lib/currency.ts';
import { newId } from '../lib/ids.ts';
import { dueText, optionKey, optionsFor, schedule, type InstallmentOption, type PlanChoice, type ScheduledPart } from '../lib/installments.ts';
import type { Services } from '../services.ts';

/**
 * Offering plans on a payer-facing page (the payment link page, the hosted invoice page): each
 * option with every amount and date, and the authorisation the payer ticks, word for word; then
 * reading the choice posted back. The dates are counted from now, the moment the payer sees them
 * and pays the first part (the plan counts its own from the first part's payment: the same day
 * unless the hosted checkout is left open past midnight, UTC).
 */

export interface PlanOffer {
  option: InstallmentOption;
  /** The radio button's value: `3-month`. */
  key: string;
  /** "3 monthly payments". */
  title: string;
  parts: ScheduledPart[];
  /** The authorisation, as shown beside the option and recorded with the plan when chosen. */
  agreement: string;
}

const UNIT: Record<InstallmentOption['interval'], string> = { week: 'weekly', month: 'monthly' };

export { dueText };

const list = (items: string[]) => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/** "I authorise Acme to charge my card $33.34 today and $33.33 on each of …, and to keep my card …". */
export function agreementText(merchant: string | null, currency: string, parts: readonly ScheduledPart[], shortened: boolean): string {
  const money = (n: number) => formatAmount(n, currency);
  const [first, ...later] = parts;
  const same = later.every((p) => p.amountCents === later[0]!.amountCents);
  const dates = later.map((p) => dueText(p.dueAt, shortened));
  const rest = same
    ? `${money(later[0]!.amountCents)} on each of ${list(dates)}`
    : list(later.map((p, i) => `${money(p.amountCents)} on ${dates[i]}`));
  return (
    `I authorise ${merchant ?? 'the merchant'} to charge my card ${money(first!.amountCents)} today and ${rest}, ` +
    `and to keep my card with its payment processor for these payments until the plan is paid or cancelled.`
  );
}

/** The test mode's shortened interval and dunning step (INSTALLMENT_TEST_*), never for live mode. */
export function testCalendar(s: Services, livemode: boolean): { interval: number | null; retry: number | null } {
  if (livemode) return { interval: null, retry: null };
  return { interval: s.config.installmentsTest.intervalSeconds, retry: s.config.installmentsTest.retrySeconds };
}

/** The plans offered over `total`: those of the options that split it into parts of at least 1. */
export function planOffers(args: {
  total: number;
  currency: string;
  options: readonly InstallmentOption[] | null;
  merchant: string | null;
  testIntervalSeconds: number | null;
  now?: Date;
}): PlanOffer[] {
  const now = args.now ?? new Date();
  const shortened = args.testIntervalSeconds !== null;
  return optionsFor(args.options, args.total).map((option) => {
    const parts = schedule(args.total, option, now, args.testIntervalSeconds);
    return {
      option,
      key: optionKey(option),
      title: `${option.count} ${UNIT[option.interval]} payments`,
      parts,
      agreement: agreementText(args.merchant, args.currency, parts, shortened),
    };
  });
}

/** What the payer chose, as the form posted it. */
export interface PlanForm {
  plan: string;
  agree: boolean;
}

export type PlanFormErrors = Partial<Record<'plan' | 'agree', string>>;

/** The choice posted: paying in full, or one of the offers (then the agreement must be ticked). */
export function readPlanForm(form: PlanForm, offers: readonly PlanOffer[]): { full: true } | { offer: PlanOffer } | { errors: PlanFormErrors } {
  if (form.plan === '' || form.plan === 'full') return { full: true };
  const offer = offers.find((o) => o.key === form.plan);
  if (!offer) return { errors: { plan: 'Choose how you would like to pay.' } };
  if (!form.agree) return { errors: { agree: 'Tick the box to agree to the payment plan, or choose to pay in full.' } };
  return { offer };
}

const isEmail = (v: string) => v.length <= 254 && z.email().safeParse(v).success;
export const validPlanEmail = isEmail;

/**
 * The plan the payer chose, to be carried by the checkout session of its first part: a new plan
 * id, the option, the total, the authorisation as shown with when and from where, the payer's
 * email, and the test calendar for a test-mode plan (none for live).
 */
export function newPlanChoice(s: Services, args: { offer: PlanOffer; total: number; email: string; ip: string | null; livemode: boolean }): PlanChoice {
  const calendar = testCalendar(s, args.livemode);
  return {
    kind: 'plan',
    plan_id: newId('ip'),
    count: args.offer.option.count,
    interval: args.offer.option.interval,
    total_cents: args.total,
    test_interval_seconds: calendar.interval,
    test_retry_seconds: calendar.retry,
    email: args.email,
    agreement: { text: args.offer.agreement, agreed_at: new Date().toISOString(), ip: args.ip },
  };
}
