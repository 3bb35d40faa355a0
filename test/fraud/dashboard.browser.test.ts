import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, payOnHostedPage, PHONE, screenshot, withPage } from '../helpers/browser.ts';
import { CARDS } from '../helpers/cards.ts';
import { cspViolations, signInBrowser } from '../helpers/dash-client.ts';
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

describe('the fraud page and a review in Chromium', () => {
  it('when the owner writes a review rule, tries it, creates it, and approves a held payment from its page, then the payment succeeds', async () => {
    // Some history for the trial: two earlier $75 payments.
    for (let i = 0; i < 2; i++) {
      const cs = await createSession(t, account.test, { amount: 7500 });
      await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key: account.test, body: { card: CARDS.visa } });
    }
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@fraud.example');
      await page.getByRole('link', { name: 'Fraud' }).click();
      await page.waitForURL(`${t.url}/dashboard/fraud`);
      await page.getByLabel('Name', { exact: true }).fill('Large orders');
      await page.getByLabel('Action').selectOption('review');
      await page.locator('#cond_0_attribute').selectOption('amount_cents');
      await page.locator('#cond_0_operator').selectOption('gte');
      await page.locator('#cond_0_value').fill('5000');
      await page.getByRole('button', { name: 'Try against the last 30 days' }).click();
      await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Would have held for review 2 payments');
      // The draft is kept: create it from the same form.
      expect(await page.locator('#cond_0_value').inputValue()).toBe('5000');
      await screenshot(page, 'fraud-rules-trial-desktop');
      await page.getByRole('button', { name: 'Create the rule' }).click();
      await expect.poll(() => page.locator('main').innerText()).toContain('Rule created');
      expect(await page.locator('main table').first().innerText()).toBeTruthy();

      // A payer's $75 payment is now held.
      const cs = await createSession(t, account.test, { amount: 7500 });
      await withPage(browser, PHONE, async (payer) => {
        await payOnPage(payer, cs.id, CARDS.visa);
        await expect.poll(() => payer.locator('body').innerText()).toContain('Payment under review');
        await screenshot(payer, 'fraud-review-payer-phone');
      });
      const [held] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.id}`;
      await page.goto(`${t.url}/dashboard/fraud`);
      await page.getByRole('link', { name: held!.id }).click();
      await page.waitForURL(new RegExp(`/dashboard/payments/${held!.id}$`));
      expect(await page.locator('#fraud').innerText()).toContain('Rule "Large orders": amount_cents >= 5000');
      await screenshot(page, 'fraud-review-payment-desktop');
      // Keyboard: focus the approve button and press Enter.
      await page.getByRole('button', { name: 'Approve and charge' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/done=review_approved/);
      await expect.poll(() => page.locator('main').innerText()).toContain('Review approved');
      expect(await page.locator('#fraud').innerText()).toContain('approved by owner@fraud.example');
      await screenshot(page, 'fraud-review-approved-desktop');
      expect(violations).toEqual([]);
    });
    const p = (await t.request('GET', `/v1/payments?limit=1`, { key: account.test })).body.data[0];
    expect(p).toMatchObject({ status: 'SUCCEEDED', review: { status: 'approved' } });
  });

  it('when the fraud page is opened on a phone, then it fits the width', async () => {
    await withPage(browser, PHONE, async (page) => {
      await signInBrowser(page, t, account.accountId, 'owner@fraud.example');
      await page.goto(`${t.url}/dashboard/fraud`);
      const width = await page.locator('html').evaluate((el) => el.scrollWidth);
      await screenshot(page, 'fraud-rules-phone');
      expect(width).toBeLessThanOrEqual(PHONE.width);
    });
  });
});
