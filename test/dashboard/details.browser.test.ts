import { mkdir } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailWorker } from '../../workers/email.ts';
import { DESKTOP, fitsWidth, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';
import { createSession } from '../helpers/factories.ts';

// Issue 22, points 5 and 8 in Chromium: the email banner and a LOGGED email, Home's gross volumes,
// a payment's line items and metadata, the email filter, a deleted customer, the refund hint; on a
// desktop and at 390 px, with screenshots in test/artifacts/dashboard.

const t = useTestServer({ workers: [emailWorker as never] });
let browser: Browser;
let account: { accountId: string; test: string };
let order: string;
let invoice: string;

beforeAll(async () => {
  account = await t.account();
  await t.sql`update accounts set business_name = 'Tea Room' where id = ${account.accountId}`;
  const ada = (await t.request('POST', '/v1/customers', { key: account.test, body: { email: 'ada@example.com', first_name: 'Ada' } })).body.id;
  const cs = await createSession(t, account.test, {
    amount: 4900,
    customer_id: ada,
    line_items: [
      { name: 'Green tea, 100 g', quantity: 2, amount: 850 },
      { name: 'Teapot', quantity: 1, amount: 3200 },
    ],
    metadata: { order_id: '1042' },
  });
  await new Payer(t).pay(cs.id, { email: 'ada@example.com' });
  order = (await t.sql`select id from payments where checkout_session_id = ${cs.id}`)[0]!.id;
  const gone = (await t.request('POST', '/v1/customers', { key: account.test, body: { email: 'gone@example.com' } })).body.id;
  const cs2 = await createSession(t, account.test, { amount: 1200, customer_id: gone });
  await new Payer(t).pay(cs2.id, { email: 'grace@example.com' });
  await t.request('DELETE', `/v1/customers/${gone}`, { key: account.test });
  const inv = await t.request('POST', '/v1/invoices', { key: account.test, body: { customer_id: ada, currency: 'usd', line_items: [{ name: 'Tea for 12', quantity: 1, amount: 42000 }] } });
  invoice = inv.body.id;
  await t.request('POST', `/v1/invoices/${invoice}/send`, { key: account.test });
  await eventually(async () => (await t.sql`select status from emails where related_object = ${invoice}`)[0]?.status === 'SENT');
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

describe('the dashboard details in Chromium', () => {
  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])('when a merchant without SMTP_URL goes through Home, a payment and an invoice (%s), then each says what it should and fits the screen', async (name, viewport) => {
    await withPage(browser, viewport, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      const banner = page.getByRole('note').filter({ hasText: 'Email is not set up.' });
      expect(await banner.count()).toBe(1);
      expect(await page.getByRole('heading', { name: 'Gross volume today (UTC)' }).count()).toBe(1);
      expect(await page.getByText('Succeeded payments, before refunds.').count()).toBe(2);
      expect(await fitsWidth(page)).toBe(true);
      await page.screenshot({ path: `${SHOTS}/issue22-home-${name}.png`, fullPage: true });

      // The filter takes an email, typed and sent with the keyboard.
      await page.goto(`${t.url}/dashboard/payments`);
      await page.getByLabel('Customer ID or email').fill('Grace@Example.com');
      await page.keyboard.press('Enter');
      await page.waitForURL(/customer=Grace%40Example\.com/);
      expect(await page.locator('tbody tr').count()).toBe(1);
      expect(await page.locator('tbody').innerText()).toContain('grace@example.com (customer deleted)');
      expect(await page.locator('tbody a[href^="/dashboard/customers/"]').count()).toBe(0);
      expect(await fitsWidth(page)).toBe(true);
      await page.screenshot({ path: `${SHOTS}/issue22-payments-by-email-${name}.png`, fullPage: true });

      await page.goto(`${t.url}/dashboard/payments/${order}`);
      const session = page.locator('#session');
      expect(await session.getByRole('cell', { name: 'Teapot' }).count()).toBe(1);
      expect(await session.innerText()).toContain('order_id=1042');
      expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('49.00');
      expect(await page.getByText('All that is left, $49.00, is filled in: type less to refund part of it.').count()).toBe(1);
      expect(await fitsWidth(page)).toBe(true);
      await page.screenshot({ path: `${SHOTS}/issue22-payment-${name}.png`, fullPage: true });

      await page.goto(`${t.url}/dashboard/invoices/${invoice}`);
      expect(await page.getByText('logged (SMTP_URL is unset)').count()).toBe(1);
      expect(await fitsWidth(page)).toBe(true);
      await page.screenshot({ path: `${SHOTS}/issue22-invoice-emails-${name}.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });
});
