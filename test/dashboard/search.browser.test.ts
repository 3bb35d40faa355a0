import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, fitsWidth, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';

const t = useTestServer();
let browser: Browser;
let account: { accountId: string; test: string; live: string };
const payments: Record<string, string> = {};

beforeAll(async () => {
  account = await t.account();
  const other = await t.account();
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${account.accountId}`;
  const pay = async (key: string, name: string, email: string, amount: number, card: string) => {
    const cs = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount, currency: 'eur', success_url: 'https://example.com/ok', customer_email: email } });
    await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key, body: { card, email, name } });
    const [row] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.body.id}`;
    return row!.id;
  };
  payments.ada = await pay(account.test, 'Ada Lovelace', 'ada@example.com', 4000, '4242424242424242');
  payments.grace = await pay(account.test, 'Grace Hopper', 'grace@example.com', 1500, '5555555555554444');
  payments.other = await pay(other.test, 'Ada Other', 'ada@example.com', 4000, '4242424242424242');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('search in the dashboard, in Chromium', () => {
  it('when a merchant types a search in the top bar, then the results page lists the matching payments of this account and mode, each opening its page', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.getByRole('searchbox', { name: 'Search payments' }).fill('ada amount>=4000 last4:4242');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/dashboard\/search\?q=/);
      const rows = page.locator('main table tbody tr');
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().innerText()).toContain('ada@example.com');
      await page.screenshot({ path: `${SHOTS}/search-results-desktop.png`, fullPage: true });

      // Another record type, chosen beside the box.
      await page.getByRole('searchbox', { name: 'Search', exact: true }).fill('grace');
      await page.getByLabel('In').selectOption('checkout-sessions');
      await page.getByRole('button', { name: 'Search', exact: true }).last().click();
      await page.waitForURL(/in=checkout-sessions/);
      expect(await page.locator('main table tbody tr').count()).toBe(1);
      expect(await page.locator('main table tbody tr').first().innerText()).toContain('grace@example.com');

      // The result opens the payment's page.
      await page.goto(`${t.url}/dashboard/search?q=${encodeURIComponent('email:"ada@example.com"')}`);
      await page.locator('main table tbody tr a').first().click();
      await page.waitForURL(new RegExp(`/dashboard/payments/${payments.ada}$`));
      expect(violations).toEqual([]);
    });
  });

  it('when the query is malformed, then the box says where, announced, with a 400', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      const answer = await page.goto(`${t.url}/dashboard/search?q=${encodeURIComponent('amount>= OR')}`);
      expect(answer!.status()).toBe(400);
      const box = page.getByRole('searchbox', { name: 'Search', exact: true });
      expect(await box.getAttribute('aria-invalid')).toBe('true');
      expect(await box.inputValue()).toBe('amount>= OR');
      expect(await page.getByRole('alert').innerText()).toContain('position 9');
      await page.screenshot({ path: `${SHOTS}/search-error-desktop.png`, fullPage: true });
    });
  });

  it('when searched on a phone, then the page fits the screen', async () => {
    await withPage(browser, PHONE, async (page) => {
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/search?q=example&in=payments`);
      expect(await page.locator('main table tbody tr').count()).toBe(2);
      expect(await fitsWidth(page)).toBe(true);
      await page.screenshot({ path: `${SHOTS}/search-results-phone.png`, fullPage: true });
    });
  });
});
