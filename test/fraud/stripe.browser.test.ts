import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { BLOCKED_MESSAGE } from '../../src/checkout/pay.ts';
import { sweepReviews } from '../../src/checkout/review.ts';
import { DESKTOP, PHONE, screenshot, withPage } from '../helpers/browser.ts';
import { DIGITS } from '../helpers/cards.ts';
import { signedIn, type DashClient } from '../helpers/dash-client.ts';
import { eventsFor } from '../helpers/events.ts';
import { createSession, teaRoomOrder } from '../helpers/factories.ts';
import { useTestServer } from '../helpers/server.ts';
import { fingerprintOf, stripeEnv } from '../helpers/stripe/api.ts';
import { useStripePage } from '../helpers/stripe/page.ts';
import { eventually } from '../helpers/wait.ts';

/**
 * Issue 27 point 4 with Stripe's Payment Element, in Chromium, in live mode against the Stripe API
 * stand-in and its Stripe.js stand-in: the page makes a confirmation token of the card, the
 * service reads the card's fingerprint and country from it and runs the fraud rules before it
 * confirms anything (docs/fraud.md "Card facts"); a review is authorised with manual capture at
 * the stand-in, then captured or cancelled there by the decision.
 */

const site = useStripePage();

describe('fraud rules on the Payment Element page with live Stripe keys', { timeout: 120_000 }, () => {
  // Every attempt of this file comes from 127.0.0.1: the card-testing limits are not what is tested here.
  const t = useTestServer(() => ({ env: { ...stripeEnv(site.api), RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR: '1000', RATE_LIMIT_PAY_PER_SESSION_PER_HOUR: '100' } }));
  beforeAll(() => {
    site.api.webhookUrl = `${t.url}/processor/stripe/webhook`;
  });

  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await t.request(method, path, { key, body });
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const paymentsOf = (id: string) =>
    t.sql<{ id: string; status: string; failure_code: string | null }[]>`select id, status, failure_code from payments where checkout_session_id = ${id} order by id`;
  const intentOf = async (sessionId: string) => (await t.sql<{ payment_intent_id: string }[]>`select payment_intent_id from checkout_sessions where id = ${sessionId}`)[0]!.payment_intent_id;
  const sessionStatus = async (id: string) => (await t.sql<{ status: string }[]>`select status from checkout_sessions where id = ${id}`)[0]!.status;
  const chargesOf = (intent: string) => [...site.api.charges.values()].filter((c) => c.payment_intent === intent);
  const countEvents = async (type: string, objectId: string) =>
    Number((await t.sql`select count(*)::int as n from events where type = ${type} and data->'object'->>'id' = ${objectId}`)[0]!.n);

  /** How long a poll waits for the page: a payment is a token, two transactions and a confirmation on a busy machine. */
  const SLOW = { timeout: 20_000 };

  async function open(page: Page, url: string) {
    await page.goto(url);
    await expect.poll(() => page.getByRole('button', { name: /^Pay/ }).isEnabled(), SLOW).toBe(true);
  }
  async function pay(page: Page, card: string, email = 'ada@example.com') {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Card number').fill(card);
    await page.getByRole('button', { name: /^Pay/ }).click();
  }
  /** Presses Pay again with `card` and waits until the service recorded the attempt (the page's message may not change). */
  async function payAgain(page: Page, sessionId: string, card: string, attempts: number) {
    await page.getByLabel('Card number').fill(card);
    await expect.poll(() => page.getByRole('button', { name: /^Pay/ }).isEnabled(), SLOW).toBe(true);
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(async () => (await paymentsOf(sessionId)).filter((p) => p.status !== 'PENDING').length, { timeout: 15_000 }).toBe(attempts);
  }
  async function reachesSuccess(page: Page, id: string) {
    await page.waitForURL(`${site.merchantUrl}/success?session=${id}`, { timeout: 20_000 });
  }

  it('when the card is issued in a blocked country, or its fingerprint is on the block list, then the payer reads a plain decline and Stripe is never asked to confirm; another card then pays', async () => {
    const { live } = await t.account();
    const country = await call(live, 'POST', '/v1/fraud/lists', { kind: 'card_country', value: 'BR' });
    const card = await call(live, 'POST', '/v1/fraud/lists', { kind: 'card_fingerprint', value: fingerprintOf(DIGITS.canada) });
    const cs = await createSession(t, live, teaRoomOrder(site.merchantUrl));
    await withPage(site.browser, PHONE, async (page) => {
      await open(page, cs.url);
      await pay(page, DIGITS.brazil);
      await expect.poll(() => page.locator('#payment-message').textContent(), SLOW).toBe(BLOCKED_MESSAGE);
      expect(await page.locator('body').innerText()).not.toMatch(/block list|country|BR\b|fingerprint|rule/i);
      await screenshot(page, 'fraud-element-blocked-phone');
      await payAgain(page, cs.id, DIGITS.canada, 2);
      // The attempt is recorded before the page reads its answer: wait for the page too.
      await expect.poll(() => page.locator('#payment-message').textContent(), SLOW).toBe(BLOCKED_MESSAGE);
      await page.getByLabel('Card number').fill(DIGITS.visa);
      await page.getByRole('button', { name: /^Pay/ }).click();
      await reachesSuccess(page, cs.id);
    });
    const rows = await paymentsOf(cs.id);
    expect(rows.map((r) => [r.status, r.failure_code])).toEqual([['FAILED', 'blocked'], ['FAILED', 'blocked'], ['SUCCEEDED', null]]);
    // The facts came from the confirmation token, before anything was charged.
    expect(await call(live, 'GET', `/v1/payments/${rows[0]!.id}`)).toMatchObject({
      failure_message: BLOCKED_MESSAGE,
      fraud: { action: 'block', rule_id: country.id },
      card: { brand: 'visa', last4: '0002', country: 'BR', fingerprint: fingerprintOf(DIGITS.brazil) },
    });
    expect(await call(live, 'GET', `/v1/payments/${rows[1]!.id}`)).toMatchObject({
      fraud: { action: 'block', rule_id: card.id },
      card: { last4: '0000', country: 'CA', fingerprint: fingerprintOf(DIGITS.canada) },
    });
    // Stripe saw one confirmation and one charge: the card that paid. The blocked cards reached only its token endpoint.
    const intent = await intentOf(cs.id);
    expect(site.api.confirmsOf(intent)).toHaveLength(1);
    expect(chargesOf(intent)).toHaveLength(1);
    for (const blocked of [DIGITS.brazil, DIGITS.canada]) {
      expect(site.api.requestsContaining(blocked).map((r) => r.path)).toEqual(['/v1/confirmation_tokens']);
    }
    expect(await countEvents('checkout.session.completed', cs.id)).toBe(1);
  });

  it('when one card is tried again and again (card testing), then a velocity rule on card attempts blocks it before Stripe, on this session and on the next', async () => {
    const { live } = await t.account();
    const rule = await call(live, 'POST', '/v1/fraud/rules', {
      name: 'Card testing',
      action: 'block',
      conditions: [{ attribute: 'card_attempts', window_seconds: 600, operator: 'gte', value: 2 }],
    });
    const cs = await createSession(t, live, teaRoomOrder(site.merchantUrl));
    await withPage(site.browser, DESKTOP, async (page) => {
      await open(page, cs.url);
      await pay(page, DIGITS.declined);
      await expect.poll(() => page.locator('#payment-message').textContent(), SLOW).toContain('declined');
      await payAgain(page, cs.id, DIGITS.declined, 2);
      await payAgain(page, cs.id, DIGITS.declined, 3);
      await expect.poll(() => page.locator('#payment-message').textContent(), SLOW).toBe(BLOCKED_MESSAGE);
    });
    const rows = await paymentsOf(cs.id);
    expect(rows.map((r) => r.failure_code)).toEqual(['card_declined', 'card_declined', 'blocked']);
    expect(await call(live, 'GET', `/v1/payments/${rows[2]!.id}`)).toMatchObject({
      fraud: { action: 'block', rule_id: rule.id, reason: 'Rule "Card testing": card_attempts in 600s >= 2' },
      card: { fingerprint: fingerprintOf(DIGITS.declined) },
    });
    // The bank saw the first two; the third never reached a confirmation.
    expect(site.api.confirmsOf(await intentOf(cs.id))).toHaveLength(2);
    // A fresh checkout of the same merchant does not reset the count: the card is what is counted.
    const next = await createSession(t, live, teaRoomOrder(site.merchantUrl));
    await withPage(site.browser, DESKTOP, async (page) => {
      await open(page, next.url);
      await pay(page, DIGITS.declined);
      await expect.poll(() => page.locator('#payment-message').textContent(), SLOW).toBe(BLOCKED_MESSAGE);
    });
    expect((await paymentsOf(next.id)).map((r) => r.failure_code)).toEqual(['blocked']);
    expect(site.api.confirmsOf(await intentOf(next.id))).toHaveLength(0);
  });

  describe('a review rule', () => {
    let live: string;
    let owner: DashClient;
    let ruleId: string;
    beforeAll(async () => {
      const account = await t.account();
      live = account.live;
      owner = await signedIn(t, account.accountId, 'owner@shop.example');
      await t.sql`update dashboard_users set role = 'owner' where account_id = ${account.accountId} and email = 'owner@shop.example'`;
      expect((await owner.post('/dashboard/mode', { mode: 'live' })).status).toBe(303);
      ruleId = (await call(live, 'POST', '/v1/fraud/rules', { name: 'Large orders', action: 'review', conditions: [{ attribute: 'amount_cents', operator: 'gte', value: 4000 }] })).id;
    });

    /** A $49.00 order paid in the site.browser with 4242: the rule holds it. */
    async function held() {
      const cs = await createSession(t, live, teaRoomOrder(site.merchantUrl));
      await withPage(site.browser, DESKTOP, async (page) => {
        await open(page, cs.url);
        await pay(page, DIGITS.visa);
        await expect.poll(() => page.getByRole('heading', { name: 'Payment under review' }).count(), { timeout: 20_000 }).toBe(1);
        await screenshot(page, 'fraud-element-review-desktop');
      });
      const [row, ...others] = await paymentsOf(cs.id);
      expect(others).toEqual([]);
      const intent = await intentOf(cs.id);
      return { cs, paymentId: row!.id, intent };
    }

    /** Opens the payment's dashboard page (live mode), then posts the decision from it. */
    async function decide(paymentId: string, decision: 'approve' | 'refuse') {
      const page = await owner.get(`/dashboard/payments/${paymentId}`);
      expect(page.status).toBe(200);
      expect(page.html).toContain('Approve and charge');
      const answer = await owner.post(`/dashboard/fraud/reviews/${paymentId}/${decision}`, {});
      expect(answer.status).toBe(303);
    }

    it('when a review rule matches, then Stripe only authorises (manual capture) and the payment is held; approving it in the dashboard captures at Stripe and completes the session, with payment.review_closed', async () => {
      const { cs, paymentId, intent } = await held();
      expect(site.api.intents.get(intent)).toMatchObject({ status: 'requires_capture', capture_method: 'manual' });
      expect(await call(live, 'GET', `/v1/payments/${paymentId}`)).toMatchObject({
        status: 'PENDING',
        fraud: { action: 'review', rule_id: ruleId },
        review: { status: 'open' },
        card: { brand: 'visa', last4: '4242', country: 'US', fingerprint: fingerprintOf(DIGITS.visa) },
      });
      expect(await sessionStatus(cs.id)).toBe('OPEN');
      await decide(paymentId, 'approve');
      expect(site.api.intents.get(intent)!.status).toBe('succeeded');
      expect(site.api.requests.filter((r) => r.method === 'POST' && r.path === `/v1/payment_intents/${intent}/capture`)).toHaveLength(1);
      expect(await call(live, 'GET', `/v1/payments/${paymentId}`)).toMatchObject({ status: 'SUCCEEDED', review: { status: 'approved', closed_by: 'owner@shop.example' } });
      expect(await sessionStatus(cs.id)).toBe('COMPLETE');
      // Stripe's payment_intent.succeeded of the capture comes too: it changes nothing.
      await eventually(async () => site.api.eventsOf('payment_intent.succeeded').some((e) => e.event.data.object.id === intent && e.status === 200));
      expect(await eventsFor(t, paymentId)).toEqual(['payment.review_opened', 'payment.succeeded', 'payment.review_closed']);
      expect(await countEvents('checkout.session.completed', cs.id)).toBe(1);
    });

    it('when the owner refuses, or nobody decides before the deadline (the payment-reviews pass), then the authorisation is cancelled at Stripe and the payment fails, with payment.review_closed', async () => {
      const refused = await held();
      await decide(refused.paymentId, 'refuse');
      expect(site.api.intents.get(refused.intent)).toMatchObject({ status: 'canceled' });
      expect(await call(live, 'GET', `/v1/payments/${refused.paymentId}`)).toMatchObject({ status: 'FAILED', failure_code: 'review_refused', review: { status: 'refused' } });
      expect(await eventsFor(t, refused.paymentId)).toEqual(['payment.review_opened', 'payment.failed', 'payment.review_closed']);

      const expired = await held();
      expect(await sweepReviews(t.s)).toBe(0); // not due yet
      await t.sql`update payments set review_deadline = now() - interval '1 second' where id = ${expired.paymentId}`;
      expect(await sweepReviews(t.s)).toBe(1);
      expect(site.api.intents.get(expired.intent)).toMatchObject({ status: 'canceled', cancellation_reason: 'fraudulent' });
      expect(await call(live, 'GET', `/v1/payments/${expired.paymentId}`)).toMatchObject({
        status: 'FAILED',
        failure_code: 'review_expired',
        review: { status: 'expired', closed_by: 'deadline' },
      });
      expect(await eventsFor(t, expired.paymentId)).toEqual(['payment.review_opened', 'payment.failed', 'payment.review_closed']);
      // Neither was ever captured: no money moved.
      for (const { intent, cs } of [refused, expired]) {
        expect(chargesOf(intent).map((c) => c.captured)).toEqual([false]);
        expect(await sessionStatus(cs.id)).toBe('OPEN');
      }
      // Stripe's payment_intent.canceled events change nothing.
      await eventually(async () => site.api.eventsOf('payment_intent.canceled').filter((e) => e.status === 200).length >= 2);
      expect(await eventsFor(t, expired.paymentId)).toEqual(['payment.review_opened', 'payment.failed', 'payment.review_closed']);
    });
  });
});
