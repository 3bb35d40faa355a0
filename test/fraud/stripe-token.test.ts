import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIGITS } from '../helpers/cards.ts';
import { delivered, ElementPayer, eventTypes, paymentsOf } from '../helpers/element-payer.ts';
import { eventually } from '../helpers/wait.ts';
import { createSession } from '../helpers/factories.ts';
import { useTestServer } from '../helpers/server.ts';
import { fingerprintOf, LIVE_KEYS, StripeStandIn, stripeEnv, TEST_KEYS } from '../helpers/stripe/api.ts';
import { STRIPE_WEBHOOK_PATH } from '../../src/processor-events/routes.ts';

/**
 * The prepare post of a Payment Element page finalized on the server, over HTTP without a browser
 * (the browser's part is test/fraud/stripe.browser.test.ts): what the service does with the
 * confirmation token it is given, against the Stripe API stand-in.
 */
const api = new StripeStandIn();
beforeAll(async () => {
  await api.start();
});
afterAll(async () => {
  await api.close();
});

const t = useTestServer(() => ({ env: stripeEnv(api, { test: true }) }));
let live: string;
beforeAll(async () => {
  api.webhookUrl = `${t.url}${STRIPE_WEBHOOK_PATH}`;
  ({ live } = await t.account());
});

/** What Stripe.js's createConfirmationToken does: the card straight to Stripe (the stand-in) with a publishable key. */
async function tokenOf(card: string, opts: { publishableKey?: string; setupFutureUsage?: string } = {}): Promise<string> {
  const body = new URLSearchParams({ 'payment_method_data[card][number]': card });
  if (opts.setupFutureUsage) body.set('setup_future_usage', opts.setupFutureUsage);
  const res = await fetch(`${api.url}/v1/confirmation_tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.publishableKey ?? LIVE_KEYS.publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  const ct = (await res.json()) as { id: string };
  return ct.id;
}

/** A live session's page opened: the intent exists. */
async function opened() {
  const cs = await createSession(t, live);
  const payer = new ElementPayer(t, cs.id);
  await payer.open();
  return { cs, payer };
}

const prepare = (payer: ElementPayer, token: string) => payer.prepareWithToken(token);

describe('the Payment Element finalized on the server', () => {
  it('when the token is the card 4242, then the server confirms the intent with it and the payment succeeds with Stripe\'s card facts; the token cannot be used again', async () => {
    const { cs, payer } = await opened();
    const token = await tokenOf(DIGITS.visa);
    const answer = await prepare(payer, token);
    expect(answer).toMatchObject({ status: 200, body: { redirect: expect.stringContaining('merchant.example/thanks') } });
    const [payment, ...others] = await paymentsOf(t, cs.id);
    expect(others).toEqual([]);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', card_last4: '4242', card_country: 'US', card_fingerprint: fingerprintOf(DIGITS.visa) });
    expect(api.confirmationTokens.get(token)!.payment_intent).toBe(payer.intentId);
    // The confirmation carried an idempotency key of our payment.
    const confirm = api.confirmsOf(payer.intentId)[0]!;
    expect(confirm.headers['idempotency-key']).toBe(`confirm-${payment!.id}`);
    expect(await eventTypes(t, cs.id)).toEqual(['checkout.session.completed']);
    // Used once: on another session it is refused before anything is recorded.
    const other = await opened();
    expect(await prepare(other.payer, token)).toMatchObject({ status: 400, body: { error: expect.stringContaining('expired') } });
    expect(await paymentsOf(t, other.cs.id)).toEqual([]);
  });

  it('when the token is unknown, malformed, or of the other mode, then 400, nothing is recorded and nothing is confirmed', async () => {
    const { cs, payer } = await opened();
    const testToken = await tokenOf(DIGITS.visa, { publishableKey: TEST_KEYS.publishableKey });
    for (const token of ['ctoken_doesnotexist', 'pm_card_visa', 'ctoken_bad token', testToken]) {
      expect(await prepare(payer, token)).toMatchObject({ status: 400, body: { error: 'This payment form has expired. Nothing was charged. Please try again.' } });
    }
    expect(await paymentsOf(t, cs.id)).toEqual([]);
    expect(api.confirmsOf(payer.intentId)).toEqual([]);
  });

  it('when Stripe cannot be reached to read the token, then 503 and nothing is recorded', async () => {
    const { cs, payer } = await opened();
    const token = await tokenOf(DIGITS.visa);
    api.down = 'error';
    try {
      const answer = await prepare(payer, token);
      expect(answer.status).toBe(503);
      expect(answer.body.error).toContain('temporarily unavailable');
    } finally {
      api.down = null;
    }
    expect(await paymentsOf(t, cs.id)).toEqual([]);
  });

  it('when the bank asks for 3-D Secure, then the page gets the client secret for handleNextAction, the attempt stays in flight, and the return records it', async () => {
    const { cs, payer } = await opened();
    const answer = await prepare(payer, await tokenOf(DIGITS.threeDS));
    expect(answer).toEqual({ status: 200, body: { next_action: true, client_secret: payer.clientSecret } });
    const [inFlight] = await paymentsOf(t, cs.id);
    expect(inFlight).toMatchObject({ status: 'PENDING', card_last4: '3220' });
    expect(inFlight!.processing_since).not.toBeNull();
    // What stripe.handleNextAction does when the payer passes the challenge, then the page's return.
    api.authenticate(payer.intentId, 'complete');
    const back = await payer.back();
    expect(back.status).toBe(303);
    expect((await paymentsOf(t, cs.id)).map((p) => p.status)).toEqual(['SUCCEEDED']);
  });

  it('when the first part of an installment plan keeps the card, then a token without setup_future_usage is refused by Stripe and the attempt fails as not charged', async () => {
    // The page passes setupFutureUsage to Elements for such a session; a token made without it does not fit the intent.
    const { cs, payer } = await opened();
    api.intents.get(payer.intentId)!.setup_future_usage = 'off_session';
    const answer = await prepare(payer, await tokenOf(DIGITS.visa));
    expect(answer.status).toBe(402);
    expect((await paymentsOf(t, cs.id)).map((p) => [p.status, p.failure_code])).toEqual([['FAILED', 'processing_error']]);
    const fitting = await prepare(payer, await tokenOf(DIGITS.visa, { setupFutureUsage: 'off_session' }));
    expect(fitting.status).toBe(200);
    expect((await paymentsOf(t, cs.id)).map((p) => p.status)).toEqual(['FAILED', 'SUCCEEDED']);
  });

  it('when a page without a token (opened before this change) pays an order a review rule holds, then the intent is made manual before the browser confirms, and Stripe\'s amount_capturable_updated holds the payment', async () => {
    const account = await t.account();
    const rule = await t.request('POST', '/v1/fraud/rules', { key: account.live, body: { name: 'Everything', action: 'review', conditions: [{ attribute: 'amount_cents', operator: 'gte', value: 1 }] } });
    expect(rule.status).toBe(200);
    const cs = await createSession(t, account.live);
    const payer = new ElementPayer(t, cs.id);
    await payer.open();
    expect(await payer.prepare()).toEqual({ status: 200, body: { ok: true } });
    expect(api.intents.get(payer.intentId)!.capture_method).toBe('manual');
    // What Stripe.js's confirmPayment does on such a page: the card straight to Stripe.
    const res = await fetch(`${api.url}/v1/payment_intents/${payer.intentId}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${LIVE_KEYS.publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_secret: payer.clientSecret, 'payment_method_data[card][number]': DIGITS.visa }).toString(),
    });
    expect(((await res.json()) as { status: string }).status).toBe('requires_capture');
    await delivered(api, 'payment_intent.amount_capturable_updated');
    const [held] = await paymentsOf(t, cs.id);
    expect(held).toMatchObject({ status: 'PENDING', review_status: 'open', fraud_action: 'review', card_last4: '4242' });
    await eventually(async () => (await eventTypes(t, held!.id)).includes('payment.review_opened'));
    expect(await eventTypes(t, held!.id)).toEqual(['payment.review_opened']);
  });
});
