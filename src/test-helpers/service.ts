import type { Logger } from 'pino';
import { expireInTx } from '../checkout/expiry.ts';
import { finishChallenge, payWithCard, type PayResult } from '../checkout/pay.ts';
import { expireSessionNow, pageEmail, retrieveSession } from '../checkout/service.ts';
import { dueSessionIds, type SessionRow } from '../checkout/store.ts';
import { withTx } from '../db/tx.ts';
import { recordProcessorDispute } from '../disputes/service.ts';
import { findByProcessorId, type DisputeRow } from '../disputes/store.ts';
import { sendDueReminder } from '../invoices/reminders.ts';
import { dueRemindersOf } from '../invoices/store.ts';
import { chargeDueBy } from '../installments/charge.ts';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { findPayment, type PaymentRow } from '../payments/store.ts';
import { cardBrand } from '../processor/cards.ts';
import { requireProcessor } from '../processor/select.ts';
import type { CardDetails } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { payMethod, type AdvanceTime, type DisputePayment, type PayScenario, type PaySession } from './schema.ts';

/**
 * Test helpers (issue 15, point 3): what a payer, the clock or a cardholder would do, done on
 * request for a test key, each through the very code that does it for real, so that the same
 * rows, events, webhooks and emails follow. Test mode only: the router refuses a live key before
 * anything else, and each function here refuses one again (testModeOnly).
 */

export const TEST_MODE_ONLY = 'Test helpers are for test mode: use a test key (sk_test_…). They never act on live data.';

/** A live owner is refused, whoever calls. */
export function testModeOnly(o: Owner): void {
  if (o.livemode) throw new ApiError('forbidden', TEST_MODE_ONLY);
}

/** The simulator's test card of each scenario (DESIGN 7). */
const SCENARIO_CARDS: Record<PayScenario, string> = {
  succeeded: '4242424242424242',
  declined: '4000000000000002',
  insufficient_funds: '4000000000009995',
  expired_card: '4000000000000069',
  incorrect_cvc: '4000000000000127',
  lost_card: '4000000000009987',
  stolen_card: '4000000000009979',
  requires_3ds: '4000000000003220',
  requires_3ds_then_success: '4000000000003220',
  requires_3ds_then_failure: '4000000000003220',
  disputed: '4000000000000259',
  refund_fails: '4000000000005126',
  refund_pending: '4000000000007726',
};

/** What the 3-D Secure scenarios do at the challenge, as the payer's button on the authenticate page. */
const CHALLENGE: Partial<Record<PayScenario, 'complete' | 'fail'>> = {
  requires_3ds_then_success: 'complete',
  requires_3ds_then_failure: 'fail',
};

const invalidState = (message: string) => new ApiError('resource_invalid_state', message);

/** The session of a test key, refused unless a test card can pay it (OPEN, on the simulator's form). */
async function payableSession(s: Services, o: Owner, id: string, log: Logger): Promise<SessionRow> {
  const row = await retrieveSession(s, o, id, log); // 404, and expire-on-read as GET does
  if (row.status !== 'OPEN') throw invalidState(`Only an OPEN checkout session can be paid; this one is ${row.status}.`);
  if (row.mode === 'setup') throw invalidState('This checkout session saves a card (a plan\'s card update) and charges nothing: save a card on its hosted page (url).');
  if (requireProcessor(s, o.livemode).collectsCard !== 'server') {
    throw invalidState(
      "Test mode runs on Stripe's test mode here (STRIPE_TEST_* are set): its checkout page takes the card in Stripe's Payment Element, " +
        'so the service never sees a card number and cannot pay with one. Pay the session on its hosted page (url) with a Stripe test card ' +
        'such as 4242 4242 4242 4242, or unset STRIPE_TEST_* to use the simulator.',
    );
  }
  return row;
}

/** A test card as the form would post it: any future expiry and a CVC of the brand's length. */
function testCard(number: string, name: string): CardDetails {
  return { number, expMonth: 12, expYear: new Date().getUTCFullYear() + 5, cvc: cardBrand(number) === 'amex' ? '1234' : '123', name };
}

export interface TestPayment {
  session: SessionRow;
  payment: PaymentRow;
}

/** A result that is no payment attempt's outcome, as the API's error. */
function refusal(result: Exclude<PayResult, { payment: PaymentRow }>): ApiError {
  switch (result.kind) {
    case 'refused':
      return invalidState(result.message);
    case 'ended':
      return invalidState(`Only an OPEN checkout session can be paid; this one is ${result.session.status}.`);
    case 'in_progress':
      return new ApiError('resource_conflict', 'A payment on this checkout session is in progress: the processor has not answered yet. Try again in a moment.');
    case 'no_challenge':
      return new ApiError('resource_conflict', 'The 3-D Secure challenge of this attempt is no longer waiting: another attempt replaced it.');
  }
}

/**
 * Pays an OPEN session as the hosted page does (payWithCard, then finishChallenge for the 3-D
 * Secure scenarios): the same participants (payment link places, invoices, receipts, disputes),
 * rows and events. A decline is an answer, not an error: the FAILED payment with its
 * payment.failed, as the page shows it. A 3-D Secure card given as `card` (or `requires_3ds`)
 * stops at the challenge, which the payer can finish on the hosted page.
 * Not applied: the page's CSRF check and card-testing limits (the caller holds a test key, and no
 * real card can reach the simulator through here).
 */
export async function payCheckoutSession(s: Services, o: Owner, id: string, input: PaySession, log: Logger): Promise<TestPayment> {
  testModeOnly(o);
  const method = payMethod(input);
  const row = await payableSession(s, o, id, log);
  const number = 'card' in method ? method.card : SCENARIO_CARDS[method.scenario];
  const name = input.name ?? row.metadata.payer_name ?? '';
  const email = input.email ?? (await pageEmail(s.sql, row));
  let result = await payWithCard(s, row, testCard(number, name), email, log);
  const challenge = 'scenario' in method ? CHALLENGE[method.scenario] : undefined;
  if (challenge && result.kind === 'requires_action') {
    result = await finishChallenge(s, result.session, result.payment.id, challenge, log);
  }
  if (!('payment' in result)) throw refusal(result);
  return { session: result.session, payment: result.payment };
}

/**
 * Expires an OPEN session now: the API's own POST /v1/checkout/sessions/:id/expire (expireInTx,
 * the function the delayed job and expire-on-read run, with checkout.session.expired), kept here
 * so that a test suite can use the test helpers alone.
 */
export async function expireCheckoutSession(s: Services, o: Owner, id: string, log: Logger): Promise<SessionRow> {
  testModeOnly(o);
  return expireSessionNow(s, o, id, log);
}

/** How many objects of each kind one advance-time takes; `has_more` asks for another call. */
export const ADVANCE_BATCH = 1000;

export interface TimeAdvance {
  seconds: number;
  asOf: Date;
  sessionsExpired: number;
  remindersSent: number;
  installmentsCharged: number;
  hasMore: boolean;
}

/**
 * Runs now, through their own code, the time-based work of this account's test mode that falls
 * due by `now + seconds`: OPEN sessions whose expires_at is by then are expired (expireInTx as the
 * job runs it, with checkout.session.expired and the payer's abandoned challenge failed), and
 * invoices whose next reminder is due by then get it (sendDueReminder, one reminder per invoice per
 * call: the next is planned from the real time this one went out, as its rule says), and the parts of
 * installment plans due by then are charged, with the retries of those declined that fall due by then
 * too (chargePart, the charge job's handler: payments, events, dunning emails). Nothing is
 * moved: objects keep their real timestamps, and the call keeps no clock (docs/decisions.md, "Test
 * helpers": why there is no test clock).
 */
export async function advanceTime(s: Services, o: Owner, input: AdvanceTime, log: Logger): Promise<TimeAdvance> {
  testModeOnly(o);
  const asOf = new Date(Date.now() + input.seconds * 1000);
  const sessions = await dueSessionIds(s.sql, o, asOf, ADVANCE_BATCH + 1);
  let sessionsExpired = 0;
  for (const id of sessions.slice(0, ADVANCE_BATCH)) {
    const expired = await withTx(s, log, (tx) => expireInTx(tx, s, o, id, asOf));
    if (expired) sessionsExpired++;
  }
  const invoices = await dueRemindersOf(s.sql, o, asOf, ADVANCE_BATCH + 1);
  let remindersSent = 0;
  for (const id of invoices.slice(0, ADVANCE_BATCH)) {
    if ((await sendDueReminder(s, id, asOf)) === 'sent') remindersSent++;
  }
  // Installment parts due by then, and their retries due by then (chargePart, as the charge job runs it).
  const installments = await chargeDueBy(s, o, asOf, log);
  return {
    seconds: input.seconds,
    asOf,
    sessionsExpired,
    remindersSent,
    installmentsCharged: installments.charged,
    hasMore: sessions.length > ADVANCE_BATCH || invoices.length > ADVANCE_BATCH || installments.hasMore,
  };
}

/**
 * The cardholder disputes a SUCCEEDED payment now: the simulator opens the dispute (as it does for
 * card 4000 0000 0000 0259) and it is recorded in this request by recordProcessorDispute, the
 * function the disputes sync runs (the dispute, payments.disputed and dispute.created in one
 * transaction). The dispute's amount is what is not refunded. The sync finds it recorded already.
 */
export async function disputePayment(s: Services, o: Owner, id: string, input: DisputePayment, log: Logger): Promise<DisputeRow> {
  testModeOnly(o);
  const payment = await findPayment(s.sql, o, id);
  if (!payment) throw resourceMissing('payment', id);
  const already = () => new ApiError('charge_disputed', `This payment is disputed already: GET /v1/disputes?payment_id=${id} shows the dispute.`);
  if (payment.disputed) throw already();
  if (payment.status !== 'SUCCEEDED') throw invalidState(`Only a SUCCEEDED payment can be disputed; this one is ${payment.status}.`);
  const left = payment.amount_cents - payment.amount_refunded_cents;
  if (left <= 0) throw invalidState('This payment is refunded in full: there is nothing left to dispute.');
  const processor = requireProcessor(s, o.livemode);
  const stripeMessage =
    "This payment was made through Stripe's test mode (STRIPE_TEST_* are set), which opens disputes only for its disputed test cards " +
    '(4000 0000 0000 0259 on the Payment Element): the service cannot dispute a Stripe payment afterwards.';
  if (!processor.openDispute) throw invalidState(stripeMessage);
  const opened = await processor.openDispute({ attempt: payment.id, amount: left, reason: input.reason ?? 'fraudulent' });
  if (!opened) throw invalidState(`The simulator has no charge for this payment. ${stripeMessage}`);
  // Opened by a concurrent call, or card 0259's own dispute: this call is refused.
  if (!opened.opened) throw already();
  // Recorded by this call or, when the disputes sync found it between its opening and here, by the
  // sync: either way the dispute this call opened, answered as such.
  const row = (await recordProcessorDispute(s, opened.dispute, o.livemode, log)) ?? (await findByProcessorId(s.sql, opened.dispute.id));
  if (!row) throw already();
  return row;
}
