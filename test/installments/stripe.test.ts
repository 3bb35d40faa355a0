import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargePart, settleStuckCharges } from '../../src/installments/charge.ts';
import { startCardUpdate } from '../../src/installments/service.ts';
import { STRIPE_WEBHOOK_PATH } from '../../src/processor-events/routes.ts';
import { syncProcessorCustomers } from '../../src/processor/customers.ts';
import { useTestServer } from '../helpers/server.ts';
import { LIVE_KEYS, StripeStandIn, stripeEnv } from '../helpers/stripe/api.ts';
import { choosePlan, createInstallmentLink, eventTypes, partsOf, paymentsOfPlan } from './helpers.ts';
import { ElementPayer } from '../helpers/element-payer.ts';
import { DIGITS } from '../helpers/cards.ts';

// Live mode on Stripe (its local stand-in, test/helpers/stripe/api.ts): the first part on the
// Payment Element with setup_future_usage off_session, the card kept at Stripe as a payment method
// attached to the plan's Stripe customer before its first reuse, the later parts as off-session
// confirmed PaymentIntents keyed by our payment id; the test calendar setting is ignored in live mode.

const api = new StripeStandIn();
beforeAll(async () => {
  await api.start();
});
afterAll(async () => {
  await api.close();
});
// The shortened calendar is set: live plans must ignore it.
const t = useTestServer(() => ({ env: { ...stripeEnv(api), INSTALLMENT_TEST_INTERVAL_SECONDS: '1', INSTALLMENT_TEST_RETRY_SECONDS: '1' } }));
let live: string;
let accountId: string;
beforeAll(async () => {
  api.webhookUrl = `${t.url}${STRIPE_WEBHOOK_PATH}`;
  ({ live, accountId } = await t.account());
});

const DAY = 86_400_000;

/** What Stripe.js does with the card: straight to Stripe (the stand-in), never to the service. */
async function confirmInBrowser(payer: ElementPayer, card: string) {
  const res = await fetch(`${api.url}/v1/payment_intents/${payer.intentId}/confirm`, {
    method: 'POST',
    headers: { authorization: `Bearer ${LIVE_KEYS.publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_secret: payer.clientSecret, 'payment_method_data[card][number]': card }).toString(),
  });
  return (await res.json()) as { status: string };
}

/** A live plan: chosen on the link page, its first part paid on the Payment Element with `card`. */
async function livePlan(card: string, email: string) {
  const link = await createInstallmentLink(t, live);
  const { sessionId, checkout } = await choosePlan(t, link.url, { email });
  expect(checkout!.html).toContain('Payment 1 of 3');
  const payer = new ElementPayer(t, sessionId!);
  await payer.open();
  expect((await payer.prepare(email)).status).toBe(200);
  expect((await confirmInBrowser(payer, card)).status).toBe('succeeded');
  expect((await payer.back()).status).toBe(303);
  const [plan] = await t.sql`select * from installment_plans where checkout_session_id = ${sessionId}`;
  return { link, plan: plan!, intentId: payer.intentId };
}

describe('installment plans on Stripe (live mode)', () => {
  it('when a live plan is started, then the first intent asks Stripe to keep the card, the plan keeps only its pm_ id, and its dates are monthly whatever the test setting', async () => {
    const { plan, intentId } = await livePlan(DIGITS.visa, 'stripe-payer@example.com');
    expect(api.intents.get(intentId)).toMatchObject({ setup_future_usage: 'off_session', amount: 3334 });
    expect(plan).toMatchObject({ livemode: true, status: 'ACTIVE', test_interval_seconds: null, test_retry_seconds: null, card_last4: '4242' });
    expect(plan.processor_payment_method).toMatch(/^pm_/);
    expect(api.paymentMethods.get(plan.processor_payment_method)).toMatchObject({ card: { last4: '4242' }, customer: null });
    const parts = await partsOf(t, plan.id);
    expect(parts[1]!.due_at.getTime() - parts[0]!.due_at.getTime()).toBeGreaterThan(27 * DAY);
  });

  it('when a later part is due, then it is an off-session PaymentIntent on the saved card of the plan\'s Stripe customer, keyed by our payment id, charged once however often asked', async () => {
    const { plan } = await livePlan(DIGITS.visa, 'off-session@example.com');
    const due = new Date(Date.now() + 32 * DAY);
    const outs = await Promise.all(Array.from({ length: 5 }, () => chargePart(t.s, plan.id, 2, { dueBy: due })));
    expect(outs.filter((o) => o.kind === 'paid')).toHaveLength(1);
    const [, second] = await paymentsOfPlan(t, plan.id);
    expect(second).toMatchObject({ status: 'SUCCEEDED', installment_number: 2, card_brand: 'visa', card_last4: '4242' });
    const [customer] = await t.sql`select processor_customer_id from customers where id = ${plan.customer_id}`;
    expect(customer!.processor_customer_id).toMatch(/^cus_/);
    const pi = api.intents.get(second!.payment_intent_id)!;
    expect(pi).toMatchObject({ off_session: true, customer: customer!.processor_customer_id, payment_method: plan.processor_payment_method, amount: 3333, metadata: { payment_id: second!.id }, status: 'succeeded' });
    expect(api.paymentMethods.get(plan.processor_payment_method)!.customer).toBe(customer!.processor_customer_id);
    const creates = api.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.body.includes('off_session'));
    expect(creates.filter((r) => r.body.includes(encodeURIComponent(second!.id as string)))).toHaveLength(1);
    expect(creates.at(-1)!.headers['idempotency-key']).toBe(`charge-${second!.id}`);
    expect(await eventTypes(t, second!.id as string)).toEqual(['payment.succeeded']);
  });

  it('when the saved card declines off-session, then the part is RETRYING with payment.failed and Stripe\'s failed intent on the payment', async () => {
    const { plan } = await livePlan(DIGITS.laterDeclines, 'declined-later@example.com');
    const out = await chargePart(t.s, plan.id, 2, { dueBy: new Date(Date.now() + 32 * DAY) });
    expect(out.kind).toBe('retrying');
    const [, failed] = await paymentsOfPlan(t, plan.id);
    expect(failed).toMatchObject({ status: 'FAILED', failure_code: 'card_declined' });
    expect(api.intents.get(failed!.payment_intent_id)).toMatchObject({ status: 'requires_payment_method', metadata: { payment_id: failed!.id } });
    // Live: the retry a day later, not a second (the test setting never applies to live plans).
    const part = (await partsOf(t, plan.id))[1]!;
    expect(part.next_attempt_at!.getTime() - part.first_failed_at!.getTime()).toBe(DAY);
    // The portal cannot replace a Stripe plan's card yet: the notice offers no link and says whom to ask.
    const [notice] = await t.sql<{ text: string; html: string }[]>`select text_body as text, html_body as html from emails where template = 'installment_failed' and related_object = ${plan.id}`;
    expect(notice!.text).toContain('To use another card, contact the merchant.');
    expect(`${notice!.text}${notice!.html}`).not.toMatch(/\/portal\/|token=|Update your card/);
    expect((await t.sql`select count(*)::int as n from portal_links where customer_id = ${plan.customer_id}`)[0]!.n).toBe(0);
  });

  it('when Stripe is down at the charge, then the payment stays in flight and the sweeper, asking again with the same reference, records one charge', async () => {
    const { plan } = await livePlan(DIGITS.visa, 'outage@example.com');
    await syncProcessorCustomers(t.s); // the plan's Stripe customer exists: the outage hits the charge itself
    api.down = 'error';
    try {
      expect((await chargePart(t.s, plan.id, 2, { dueBy: new Date(Date.now() + 32 * DAY) })).kind).toBe('in_progress');
    } finally {
      api.down = null;
    }
    const [, inFlight] = await paymentsOfPlan(t, plan.id);
    expect(inFlight).toMatchObject({ status: 'PENDING' });
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${inFlight!.id}`;
    expect(await settleStuckCharges(t.s)).toBe(1);
    expect(await settleStuckCharges(t.s)).toBe(0);
    const [, settled] = await paymentsOfPlan(t, plan.id);
    expect(settled).toMatchObject({ status: 'SUCCEEDED' });
    expect([...api.intents.values()].filter((pi) => pi.metadata?.payment_id === inFlight!.id)).toHaveLength(1);
  });

  it('when a live customer asks to replace the card, then it is refused: the Payment Element has no setup page yet', async () => {
    const { plan } = await livePlan(DIGITS.visa, 'element-update@example.com');
    await expect(startCardUpdate(t.s, { accountId, livemode: true }, plan.id, 'https://shop.example')).rejects.toMatchObject({ code: 'resource_invalid_state' });
  });

  it('when the file has run, then no request the service sent to Stripe carries a card number', () => {
    const fromService = api.requests.filter((r) => !String(r.headers.authorization ?? '').includes('pk_'));
    for (const card of [DIGITS.visa, DIGITS.laterDeclines]) expect(fromService.filter((r) => r.body.includes(card) || r.path.includes(card))).toEqual([]);
  });
});
