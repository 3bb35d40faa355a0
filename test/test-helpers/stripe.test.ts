import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { StripeStandIn, stripeEnv, TEST_KEYS } from '../helpers/stripe/api.ts';
import { preparedLiveSession } from '../helpers/element-payer.ts';
import { createSession } from '../helpers/factories.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

// Test mode on Stripe's test mode (STRIPE_TEST_*), against the local stand-in of Stripe's API: the
// checkout page is the Payment Element, so the service never holds a card number.
const api = new StripeStandIn();
beforeAll(async () => {
  await api.start();
});
afterAll(async () => {
  await api.close();
});
const t = useTestServer(() => ({ env: stripeEnv(api, { test: true, live: false }) }));
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

describe('test helpers when test mode runs on Stripe', () => {
  it('when a session is paid with a card, then 400 resource_invalid_state naming the Payment Element, and no payment and no call to Stripe', async () => {
    const cs = await createSession(t, key);
    const before = api.requests.length;
    const res = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key, body: { card: CARDS.visa } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_invalid_state' });
    expect(res.body.error.message).toContain('Payment Element');
    expect(api.requests.length).toBe(before);
    expect(await t.sql`select id from payments where checkout_session_id = ${cs.id}`).toHaveLength(0);
  });

  it('when a payment made through Stripe is disputed, then 400 resource_invalid_state saying Stripe opens disputes only for its test cards', async () => {
    const { cs, payer } = await preparedLiveSession(t, key);
    const confirmed = await fetch(`${api.url}/v1/payment_intents/${payer.intentId}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS.publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_secret: payer.clientSecret, 'payment_method_data[card][number]': DIGITS.visa }).toString(),
    });
    expect(((await confirmed.json()) as { status: string }).status).toBe('succeeded');
    expect((await payer.back()).status).toBe(303);
    const paymentId = (await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body.payment_id;
    const res = await t.request('POST', `/v1/test-helpers/payments/${paymentId}/dispute`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'resource_invalid_state' });
    expect(res.body.error.message).toContain("Stripe's test mode");
    expect((await t.request('GET', `/v1/payments/${paymentId}`, { key })).body.disputed).toBe(false);
  });
});
