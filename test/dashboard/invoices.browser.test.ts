import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';

const t = useTestServer();
let browser: Browser;
let account: { accountId: string; test: string; live: string };
let customerId: string;

/** The page's width as laid out: on a phone nothing may be wider than the screen. */
const pageWidth = (page: Page) => page.evaluate('document.documentElement.scrollWidth') as Promise<number>;
const focusedId = (page: Page) => page.locator(':focus').getAttribute('id');

beforeAll(async () => {
  account = await t.account();
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${account.accountId}`;
  const res = await t.request('POST', '/v1/customers', { key: account.test, body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' } });
  customerId = res.body.id;
  // A few invoices in each state for the list.
  const make = async (lines: Array<{ name: string; quantity: number; amount: number }>, then?: string) => {
    const inv = await t.request('POST', '/v1/invoices', { key: account.test, body: { customer_id: customerId, currency: 'usd', line_items: lines, due_date: Math.floor(Date.now() / 1000) + 14 * 86400 } });
    if (then) await t.request('POST', `/v1/invoices/${inv.body.id}/${then}`, { key: account.test });
  };
  await make([{ name: 'Sencha, 100 g', quantity: 3, amount: 900 }], 'send');
  await make([{ name: 'Tea ceremony workshop', quantity: 1, amount: 12000 }], 'finalize');
  await make([{ name: 'Teapot', quantity: 1, amount: 4500 }]);
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

describe('invoices in Chromium', () => {
  it('when a merchant creates a draft with the keyboard, finalizes and sends it, then its hosted page opens from the detail page', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      page.setDefaultTimeout(8000);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Invoices' }).click();
      await page.waitForURL(`${t.url}/dashboard/invoices`);
      await page.screenshot({ path: `${SHOTS}/invoices-list-desktop.png`, fullPage: true });
      await page.getByRole('link', { name: 'New invoice' }).click();

      // The keyboard only, field after field, in the order of the form.
      await page.getByLabel('Customer', { exact: true }).focus();
      await page.keyboard.type(customerId);
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('currency');
      expect(await page.getByLabel('Currency').inputValue()).toBe('usd');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('due_date');
      await page.keyboard.type('03312031');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.type('0600P');
      expect(await page.getByLabel('Due date (UTC)').inputValue()).toBe('2031-03-31T18:00');
      // Chromium's date field ends with its calendar button, which takes one Tab.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('description');
      await page.keyboard.type('March order');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('allow_partial_payments');
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      await page.keyboard.type('5.00');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('metadata');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('line-0-name');
      for (const [name, quantity, amount] of [
        ['Oolong tea, 250 g', '2', '12.00'],
        ['Delivery', '', '5'],
      ]) {
        await page.keyboard.type(name!);
        await page.keyboard.press('Tab');
        await page.keyboard.type(quantity!);
        await page.keyboard.press('Tab');
        await page.keyboard.type(amount!);
        await page.keyboard.press('Tab');
      }
      await page.screenshot({ path: `${SHOTS}/invoices-new-desktop.png`, fullPage: true });
      await page.keyboard.press('Enter'); // in a field of the form: submits it
      await page.waitForURL(/\/dashboard\/invoices\/in_[0-9a-z]+\?done=created$/);
      const id = /in_[0-9a-z]+/.exec(page.url())![0];
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Draft invoice');
      const api = (await t.request('GET', `/v1/invoices/${id}`, { key: account.test })).body;
      expect(api).toMatchObject({ status: 'DRAFT', total_cents: 2900, due_date: Date.UTC(2031, 2, 31, 18) / 1000, allow_partial_payments: true, minimum_payment_cents: 500 });

      await page.getByRole('button', { name: 'Finalize' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/done=finalized$/);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toMatch(/^INV-\d{4}$/);
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.waitForURL(/done=sent$/);
      const sent = (await t.request('GET', `/v1/invoices/${id}`, { key: account.test })).body;
      expect(await page.locator('[data-hosted-url]').innerText()).toBe(sent.hosted_invoice_url);
      // The Copy button is shown by the dashboard's script.
      expect(await page.getByRole('button', { name: 'Copy the invoice page link' }).isVisible()).toBe(true);
      expect(await page.getByRole('cell', { name: 'ada@example.com' }).count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/invoices-detail-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);

      await page.getByRole('link', { name: 'Open the invoice page' }).click();
      await page.waitForURL(sent.hosted_invoice_url);
      expect(await page.getByText(sent.number).count()).toBeGreaterThan(0);
      expect(await page.getByText('$29.00').count()).toBeGreaterThan(0);
    });
  });

  it('when a problem is in a line, then it is named beside that line', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/invoices/new`);
      await page.getByLabel('Customer', { exact: true }).fill(customerId);
      const line = (n: number) => page.getByRole('group', { name: `Line ${n}` });
      await line(1).getByLabel('Name').fill('Oolong tea');
      await line(1).getByLabel('Unit amount').fill('12.00');
      await line(2).getByLabel('Name').fill('Delivery');
      await line(2).getByLabel('Unit amount').fill('5,00');
      await page.getByRole('button', { name: 'Create draft' }).click();
      expect(await line(2).getByLabel('Unit amount').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#line-1-amount-error').innerText()).toContain('Enter the amount in USD');
      await page.screenshot({ path: `${SHOTS}/invoices-new-error-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });

  it('when the pages are read on a phone, then nothing is wider than the screen', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/invoices`);
      expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/invoices-list-phone.png`, fullPage: true });
      await page.goto(`${t.url}/dashboard/invoices/new`);
      expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/invoices-new-phone.png`, fullPage: true });
      const [sent] = await t.sql<{ id: string }[]>`select id from invoices where account_id = ${account.accountId} and sent_at is not null order by id limit 1`;
      await page.goto(`${t.url}/dashboard/invoices/${sent!.id}`);
      expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/invoices-detail-phone.png`, fullPage: true });
      await page.goto(`${t.url}/dashboard/invoices/${sent!.id}?confirm=void`);
      expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/invoices-void-phone.png`, fullPage: true });
      const [draft] = await t.sql<{ id: string }[]>`select id from invoices where account_id = ${account.accountId} and status = 'DRAFT' order by id limit 1`;
      await page.goto(`${t.url}/dashboard/invoices/${draft!.id}/edit`);
      expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/invoices-edit-phone.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });
});
