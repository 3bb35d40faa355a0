import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, screenshot, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { stripeEnv } from '../helpers/stripe/api.ts';
import { useStripePage } from '../helpers/stripe/page.ts';
import { eventually } from '../helpers/wait.ts';
import { createSession, teaRoomOrder } from './helpers.ts';
import { DIGITS } from '../helpers/cards.ts';

/**
 * The Payment Element page in Chromium, in live mode, against the Stripe API stand-in and its
 * Stripe.js stand-in (STRIPE_API_URL, STRIPE_JS_URL). Every request the service receives goes
 * through a recording proxy (CHECKOUT_URL and the webhook URL point at it), so the test can say
 * what reached the service: never a card number.
 */

interface Seen {
  method: string;
  url: string;
  body: string;
}

/** A pass-through HTTP proxy in front of the service that keeps every request's line and body. */
async function recordingProxy() {
  const seen: Seen[] = [];
  let target = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', body: body.toString('utf8') });
      const up = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    forwardTo(url: string) {
      target = url;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

const site = useStripePage();
let proxy: Awaited<ReturnType<typeof recordingProxy>>;
beforeAll(async () => {
  proxy = await recordingProxy();
});
afterAll(async () => {
  await proxy?.close();
});

describe('the Payment Element page with live Stripe keys', () => {
  const t = useTestServer(() => ({ env: { ...stripeEnv(site.api), CHECKOUT_URL: `${proxy.url}/checkout` } }));
  let live: string;
  beforeAll(async () => {
    proxy.forwardTo(t.url);
    site.api.webhookUrl = `${proxy.url}/processor/stripe/webhook`;
    live = (await t.account()).live;
  });

  const newSession = () =>
    createSession(t, live, teaRoomOrder(site.merchantUrl));

  /** Console messages about the Content-Security-Policy, and pages that failed to load a script. */
  function watch(page: Page): string[] {
    const problems: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    return problems;
  }

  async function pay(page: Page, card: string, email = 'ada@example.com') {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Card number').fill(card);
    await page.getByRole('button', { name: /^Pay/ }).click();
  }

  /** Bounded below the test's own timeout, so that a hang says where the page was and what the service saw. */
  async function reachesSuccess(page: Page, id: string) {
    await page.waitForURL(`${site.merchantUrl}/success?session=${id}`, { timeout: 20_000 }).catch((err: Error) => {
      throw new Error(`${err.message}\npage at ${page.url()}\nservice saw: ${proxy.seen.map((r) => r.url).join(', ')}`);
    });
  }

  const sessionOf = async (id: string) => (await t.sql`select status, payment_status, payment_id from checkout_sessions where id = ${id}`)[0]!;
  const paymentsOf = (id: string) =>
    t.sql<{ id: string; status: string; card_last4: string | null; email: string | null }[]>`
      select id, status, card_last4, email from payments where checkout_session_id = ${id} order by id`;
  const countEvents = async (type: string, needle: string) =>
    Number((await t.sql`select count(*)::int as n from events where type = ${type} and position(${needle} in data::text) > 0`)[0]!.n);

  // Once in ten full runs (2026-11-23) this first payment never reached success_url, and once (CI,
  // 2026-11-27) the declined-then-paid one. One cause found: Stripe's webhook settling the payment
  // between the return page's read of the session and its look for the attempt in flight sent the
  // payer to the session's own page (a stale row), not to success_url; the return now reads the
  // session again. The retry stays for a cause not found; a hang says where the page was.
  it('when the payer pays with 4242 through the element, then success_url is reached, the session is COMPLETE with one payment.succeeded, and no card number reached the service', { retry: 1 }, async () => {
    const cs = await newSession();
    await withPage(site.browser, DESKTOP, async (page) => {
      const problems = watch(page);
      const answer = await page.goto(cs.url);
      expect(answer!.status()).toBe(200);
      const csp = answer!.headers()['content-security-policy']!;
      expect(csp).toContain(`script-src 'self' ${site.api.url}`);
      expect(csp).toContain(`connect-src 'self' ${site.api.url}`);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      await expect.poll(() => page.getByRole('button', { name: 'Pay $49.00' }).isEnabled()).toBe(true);
      await screenshot(page, 'element-desktop');
      await pay(page, DIGITS.visa);
      await reachesSuccess(page, cs.id);
      expect(problems).toEqual([]);
    });
    expect(await sessionOf(cs.id)).toMatchObject({ status: 'COMPLETE', payment_status: 'paid' });
    const [payment, ...others] = await paymentsOf(cs.id);
    expect(others).toEqual([]);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', email: 'ada@example.com' });
    // The webhook of the same success arrives too (before or after the return): still one completion.
    await eventually(async () => site.api.eventsOf('payment_intent.succeeded').some((e) => e.status === 200));
    expect(await countEvents('payment.succeeded', payment!.id)).toBe(1);
    expect(await countEvents('checkout.session.completed', cs.id)).toBe(1);
    // The card went to the stand-in of Stripe, and nowhere near the service.
    expect(site.api.requestsContaining(DIGITS.visa).length).toBeGreaterThan(0);
    expect(proxy.seen.some((r) => r.url.includes('/element/prepare'))).toBe(true);
    expect(proxy.seen.filter((r) => r.body.includes('4242') || r.url.includes('4242'))).toEqual([]);
  });

  // The decline now comes from the server's confirmation (a token read, two transactions and a
  // confirm on a busy machine), so the message is waited for longer than expect.poll's second.
  it('when the card is declined, then the page says why in its alert region, and another card then pays', async () => {
    const cs = await newSession();
    await withPage(site.browser, PHONE, async (page) => {
      const problems = watch(page);
      await page.goto(cs.url);
      await expect.poll(() => page.getByRole('button', { name: /^Pay/ }).isEnabled()).toBe(true);
      await screenshot(page, 'element-phone');
      await pay(page, DIGITS.insufficientFunds, 'grace@example.com');
      await expect.poll(() => page.locator('#payment-message').textContent(), { timeout: 15_000 }).toContain('insufficient funds');
      expect(await page.locator('#payment-message').getAttribute('role')).toBe('alert');
      await screenshot(page, 'element-declined-phone');
      expect((await sessionOf(cs.id)).status).toBe('OPEN');
      await page.getByLabel('Card number').fill(DIGITS.visa);
      await page.getByRole('button', { name: /^Pay/ }).click();
      await reachesSuccess(page, cs.id);
      expect(problems).toEqual([]);
    });
    expect((await sessionOf(cs.id)).status).toBe('COMPLETE');
    const rows = await paymentsOf(cs.id);
    expect(rows.map((r) => r.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(proxy.seen.filter((r) => r.body.includes(DIGITS.insufficientFunds))).toEqual([]);
  });

  it('when a 3-D Secure card is used, then Stripe asks for authentication; failed it is shown, completed the payment succeeds', async () => {
    const cs = await newSession();
    await withPage(site.browser, DESKTOP, async (page) => {
      await page.goto(cs.url);
      await expect.poll(() => page.getByRole('button', { name: /^Pay/ }).isEnabled()).toBe(true);
      await pay(page, DIGITS.threeDS);
      await page.getByRole('button', { name: 'Fail authentication' }).click();
      await expect.poll(() => page.locator('#payment-message').textContent(), { timeout: 15_000 }).toContain('unable to authenticate');
      expect((await sessionOf(cs.id)).status).toBe('OPEN');
      await page.getByRole('button', { name: /^Pay/ }).click();
      await screenshot(page, 'element-3ds-desktop');
      await page.getByRole('button', { name: 'Complete authentication' }).click();
      await reachesSuccess(page, cs.id);
    });
    expect((await sessionOf(cs.id)).status).toBe('COMPLETE');
    expect((await paymentsOf(cs.id)).map((r) => r.status)).toEqual(['FAILED', 'SUCCEEDED']);
  });

  // The server confirms with the page's confirmation token, so only a payment the browser finished
  // (3-D Secure) comes back through the return page: that is the one whose webhook can come first.
  it('when the webhook arrives before the payer returns from 3-D Secure, then the return still lands on success_url and the session completed once', async () => {
    const cs = await newSession();
    await withPage(site.browser, DESKTOP, async (page) => {
      await page.goto(cs.url);
      await expect.poll(() => page.getByRole('button', { name: /^Pay/ }).isEnabled()).toBe(true);
      // The browser's return waits until the service has taken Stripe's event.
      let held = 0;
      await page.route('**/element/return?*', async (route) => {
        held++;
        const intent = new URL(route.request().url()).searchParams.get('payment_intent');
        await eventually(async () => site.api.eventsOf('payment_intent.succeeded').some((e) => e.event.data.object.id === intent && e.status === 200));
        await eventually(async () => (await sessionOf(cs.id)).status === 'COMPLETE');
        await route.continue();
      });
      await pay(page, DIGITS.threeDS);
      await page.getByRole('button', { name: 'Complete authentication' }).click();
      await reachesSuccess(page, cs.id);
      expect(held).toBe(1);
    });
    const [payment] = await paymentsOf(cs.id);
    expect(await countEvents('payment.succeeded', payment!.id)).toBe(1);
    expect(await countEvents('checkout.session.completed', cs.id)).toBe(1);
  });

  it('when the webhook arrives after the payer returned, then it changes nothing: one completion', async () => {
    const cs = await newSession();
    site.api.holdEvents = true;
    try {
      await withPage(site.browser, DESKTOP, async (page) => {
        await page.goto(cs.url);
        await expect.poll(() => page.getByRole('button', { name: /^Pay/ }).isEnabled()).toBe(true);
        await pay(page, DIGITS.visa);
        await reachesSuccess(page, cs.id);
      });
      expect((await sessionOf(cs.id)).status).toBe('COMPLETE');
      expect(site.api.held.some((e) => e.type === 'payment_intent.succeeded')).toBe(true);
    } finally {
      await site.api.release();
    }
    const intent = (await t.sql`select payment_intent_id from checkout_sessions where id = ${cs.id}`)[0]!.payment_intent_id;
    expect(site.api.eventsOf('payment_intent.succeeded').find((e) => e.event.data.object.id === intent)?.status).toBe(200);
    const [payment, ...others] = await paymentsOf(cs.id);
    expect(others).toEqual([]);
    expect(await countEvents('payment.succeeded', payment!.id)).toBe(1);
    expect(await countEvents('checkout.session.completed', cs.id)).toBe(1);
  });

  it('when anything was paid on these pages, then no request the service received carried a card number', () => {
    expect(proxy.seen.length).toBeGreaterThan(10);
    for (const card of [DIGITS.visa, DIGITS.insufficientFunds, DIGITS.threeDS]) {
      expect(site.api.requestsContaining(card).length).toBeGreaterThan(0);
      expect(proxy.seen.filter((r) => r.body.includes(card) || r.url.includes(card))).toEqual([]);
    }
  });
});

describe('a live session without live keys', () => {
  const t = useTestServer();

  it('when the payer opens it, then the page refuses with a clear message and no form (200: the merchant\'s setup, not an outage), and a pay post is refused too (409)', async () => {
    const { live } = await t.account();
    const cs = await createSession(t, live);
    await withPage(site.browser, PHONE, async (page) => {
      const answer = await page.goto(cs.url);
      expect(answer!.status()).toBe(200);
      expect(await page.getByText('This merchant cannot take live payments yet').count()).toBe(1);
      expect(await page.locator('form').count()).toBe(0);
      expect(await page.getByLabel('Card number').count()).toBe(0);
      await screenshot(page, 'element-live-off-phone');
    });
    const pay = await t.request('POST', `/checkout/${cs.id}/pay`, {
      rawBody: 'email=a%40b.co&name=A&card_number=4242424242424242&expiry=12%2F34&cvc=123',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(pay.status).toBe(409);
    expect(String(pay.body)).toContain('cannot take live payments');
    const prepare = await t.request('POST', `/checkout/${cs.id}/element/prepare`, {
      rawBody: 'email=a%40b.co',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(prepare.status).toBe(409);
    expect(prepare.body).toEqual({ error: 'This merchant cannot take live payments yet. Nothing was charged.' });
    expect((await t.sql`select count(*)::int as n from payments where checkout_session_id = ${cs.id}`)[0]!.n).toBe(0);
  });
});
