import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKED_MESSAGE } from '../../src/checkout/pay.ts';
import { DESKTOP, launchBrowser, payOnHostedPage, PHONE, screenshot, withPage } from '../helpers/browser.ts';
import { CARDS } from '../helpers/cards.ts';
import { cspViolations } from '../helpers/dash-client.ts';
import { createSession } from '../helpers/factories.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
let browser: Browser;
let account: { accountId: string; test: string; live: string };

beforeAll(async () => {
  account = await t.account();
  await t.request('POST', '/v1/fraud/lists', { key: account.test, body: { kind: 'card_country', value: 'NG' } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const payOnPage = (page: Page, sessionId: string, card: string) => payOnHostedPage(page, t.url, sessionId, card);

describe('a blocked payment on the hosted page, in Chromium', () => {
  for (const [size, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
    it(`when a blocked card is paid on a ${size}, then the payer reads a plain decline, naming no rule, and may use another card`, async () => {
      const cs = await createSession(t, account.test, { amount: 2500 });
      await withPage(browser, viewport, async (page) => {
        const violations = cspViolations(page);
        await payOnPage(page, cs.id, CARDS.nigeria);
        await expect.poll(() => page.getByRole('alert').first().textContent()).toContain(BLOCKED_MESSAGE);
        const text = await page.locator('body').innerText();
        expect(text).not.toMatch(/block list|country|NG|rule/i);
        expect(await page.getByLabel('Card number').inputValue()).toBe('');
        const width = await page.locator('html').evaluate((el) => el.scrollWidth);
        expect(width).toBeLessThanOrEqual(viewport.width);
        await screenshot(page, `fraud-decline-${size}`);
        // Another card pays.
        await page.getByLabel('Card number').fill(CARDS.visa);
        await page.getByLabel('Expiry').fill('12/34');
        await page.getByLabel('CVC').fill('123');
        // The success_url (merchant.example) does not resolve here: the request to it is the answer.
        const toMerchant = page.waitForRequest(/merchant\.example\/thanks/);
        await page.getByRole('button', { name: /^Pay/ }).click();
        await toMerchant;
        expect(violations).toEqual([]);
      });
    });
  }
});
