import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, screenshot, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession, teaRoomOrder } from './helpers.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const t = useTestServer();
let key: string;
let browser: Browser;
let merchant: http.Server;
let merchantUrl: string;

beforeAll(async () => {
  key = (await t.account()).test;
  browser = await launchBrowser();
  // The merchant's site, where success_url and cancel_url lead.
  merchant = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Merchant ${req.url}</h1>`);
  });
  await new Promise<void>((r) => merchant.listen(0, '127.0.0.1', r));
  merchantUrl = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  merchant?.close();
});

const newSession = (body: Record<string, unknown> = {}) =>
  createSession(t, key, { ...teaRoomOrder(merchantUrl), ...body });

const statusOf = async (id: string) => (await t.sql`select status, payment_status from checkout_sessions where id = ${id}`)[0]!;

async function fillCard(page: Page, card: string, opts: { email?: string; name?: string } = {}) {
  if (opts.email !== undefined) await page.getByLabel('Email').fill(opts.email);
  if (opts.name !== undefined) await page.getByLabel('Name on card').fill(opts.name);
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry').fill('12/34');
  await page.getByLabel('CVC').fill('123');
}

const payButton = (page: Page) => page.getByRole('button', { name: /^Pay/ });

describe('the hosted checkout in Chromium', () => {
  it('when the payer pays with a good card, then the browser lands on success_url with the session id, and the page then shows the receipt', async () => {
    const cs = await newSession({ customer_email: 'ada@example.com' });
    await withPage(browser, DESKTOP, async (page) => {
      await page.goto(cs.url);
      await expect.poll(() => page.getByLabel('Email').inputValue()).toBe('ada@example.com');
      expect(await payButton(page).textContent()).toBe('Pay $49.00');
      await screenshot(page, 'checkout-desktop');
      await fillCard(page, CARDS.visa, { name: 'Ada Lovelace' });
      await payButton(page).click();
      await page.waitForURL(`${merchantUrl}/success?session=${cs.id}`);
      expect(await page.locator('h1').textContent()).toContain('/success');
      expect(await statusOf(cs.id)).toEqual({ status: 'COMPLETE', payment_status: 'paid' });

      await page.goto(cs.url);
      expect(await page.getByText('Payment successful').count()).toBe(1);
      expect(await page.locator('input[name="card_number"]').count()).toBe(0);
      await screenshot(page, 'completed-desktop');
      await page.getByRole('link', { name: 'View receipt' }).click();
      await page.waitForURL(`${cs.url}/receipt`);
      expect(await page.locator('h1').textContent()).toBe('Receipt');
      expect(await page.getByText('Visa •••• 4242').count()).toBe(1);
      await screenshot(page, 'receipt-desktop');
    });
    await withPage(browser, PHONE, async (page) => {
      await page.goto(`${cs.url}/receipt`);
      await screenshot(page, 'receipt-phone');
      await page.goto(cs.url);
      await screenshot(page, 'completed-phone');
    });
  });

  it('when the card is declined, then the page says so and the payer pays with another card', async () => {
    const cs = await newSession();
    await withPage(browser, PHONE, async (page) => {
      await page.goto(cs.url);
      await screenshot(page, 'checkout-phone');
      // Entering nothing: the server answers in-page, field by field.
      await payButton(page).click();
      expect(await page.getByText('Enter a valid email address.').count()).toBe(1);
      await screenshot(page, 'checkout-errors-phone');
      await fillCard(page, CARDS.insufficientFunds, { email: 'grace@example.com', name: 'Grace Hopper' });
      await payButton(page).click();
      await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('Your card was declined');
      expect(await page.getByRole('alert').first().textContent()).toContain('insufficient funds');
      await screenshot(page, 'declined-phone');
      expect((await statusOf(cs.id)).status).toBe('OPEN');
      // What was typed is kept, except the card.
      expect(await page.getByLabel('Email').inputValue()).toBe('grace@example.com');
      expect(await page.getByLabel('Card number').inputValue()).toBe('');
      await fillCard(page, DIGITS.visa);
      await payButton(page).click();
      await page.waitForURL(`${merchantUrl}/success?session=${cs.id}`);
    });
    expect((await statusOf(cs.id)).status).toBe('COMPLETE');
  });

  it('when a 3-D Secure card is used and authentication is completed, then the payment succeeds', async () => {
    const cs = await newSession();
    await withPage(browser, DESKTOP, async (page) => {
      await page.goto(cs.url);
      await fillCard(page, CARDS.threeDS, { email: 'alan@example.com', name: 'Alan Turing' });
      await payButton(page).click();
      await page.waitForURL(/\/authenticate\?payment=pay_/);
      await screenshot(page, 'three-d-secure-desktop');
      await page.getByRole('button', { name: 'Complete authentication' }).click();
      await page.waitForURL(`${merchantUrl}/success?session=${cs.id}`);
    });
    expect((await statusOf(cs.id)).status).toBe('COMPLETE');
  });

  it('when authentication is failed, then the session stays OPEN with a message and the payer can try again', async () => {
    const cs = await newSession();
    await withPage(browser, PHONE, async (page) => {
      await page.goto(cs.url);
      await fillCard(page, CARDS.threeDSAlt, { email: 'alan@example.com', name: 'Alan Turing' });
      await payButton(page).click();
      await page.waitForURL(/\/authenticate\?payment=pay_/);
      await screenshot(page, 'three-d-secure-phone');
      await page.getByRole('button', { name: 'Fail authentication' }).click();
      await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('authentication failed');
      expect((await statusOf(cs.id)).status).toBe('OPEN');
      await fillCard(page, CARDS.threeDSAlt);
      await payButton(page).click();
      await page.getByRole('button', { name: 'Complete authentication' }).click();
      await page.waitForURL(`${merchantUrl}/success?session=${cs.id}`);
    });
    expect((await statusOf(cs.id)).status).toBe('COMPLETE');
    const rows = await t.sql`select status, failure_code from payments where checkout_session_id = ${cs.id} order by id`;
    expect(rows).toEqual([{ status: 'FAILED', failure_code: 'authentication_failed' }, { status: 'SUCCEEDED', failure_code: null }]);
  });

  it('when the session has expired, then the page says so and offers no form', async () => {
    const cs = await newSession({ cancel_url: `${merchantUrl}/cart` });
    await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
    for (const [viewport, name] of [[DESKTOP, 'expired-desktop'], [PHONE, 'expired-phone']] as const) {
      await withPage(browser, viewport, async (page) => {
        await page.goto(cs.url);
        expect(await page.locator('h1').textContent()).toBe('This checkout session has expired');
        expect(await page.locator('form').count()).toBe(0);
        expect(await page.getByLabel('Card number').count()).toBe(0);
        await screenshot(page, name);
      });
    }
  });

  it('when cancel_url is set, then the cancel link takes the payer there; without it there is no cancel link', async () => {
    const cs = await newSession({ cancel_url: `${merchantUrl}/cart?order=1042` });
    await withPage(browser, DESKTOP, async (page) => {
      await page.goto(cs.url);
      await page.getByRole('link', { name: /Cancel/ }).click();
      await page.waitForURL(`${merchantUrl}/cart?order=1042`);
      const plain = await newSession();
      await page.goto(plain.url);
      expect(await page.getByRole('link', { name: /Cancel/ }).count()).toBe(0);
    });
    expect((await statusOf(cs.id)).status).toBe('OPEN');
  });
});
