import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';

const t = useTestServer();
let browser: Browser;
let account: { accountId: string; test: string; live: string };

beforeAll(async () => {
  account = await t.account();
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${account.accountId}`;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('customers in Chromium', () => {
  it('when a merchant creates, edits and deletes a customer with the keyboard, then each step shows and the API agrees', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Customers' }).click();
      await page.getByRole('link', { name: 'New customer' }).click();
      await page.getByLabel('Email').focus();
      await page.keyboard.type('grace@example.com');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Grace');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Hopper');
      await page.getByLabel('Metadata').fill('team=navy');
      await page.getByLabel('Metadata').press('Tab');
      await page.keyboard.press('Enter'); // the focus is on "Create customer"
      await page.waitForURL(/\/dashboard\/customers\/cus_[a-z0-9]+\?done=created$/);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Grace Hopper');
      expect(await page.getByRole('status').first().innerText()).toBe('Customer created.');
      const id = /cus_[a-z0-9]+/.exec(page.url())![0];
      await page.screenshot({ path: `${SHOTS}/customers-detail-desktop.png`, fullPage: true });

      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByLabel('Company').fill('US Navy');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForURL(/done=updated$/);
      expect((await t.request('GET', `/v1/customers/${id}`, { key: account.test })).body).toMatchObject({ company_name: 'US Navy', metadata: { team: 'navy' } });

      // A bad email comes back beside the field, announced.
      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByLabel('Email').fill('grace-at-example');
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#email-error').innerText()).toContain('valid email');
      await page.screenshot({ path: `${SHOTS}/customers-form-error-desktop.png`, fullPage: true });

      await page.goto(`${t.url}/dashboard/customers/${id}`);
      await page.getByRole('link', { name: 'Delete' }).click();
      await page.getByRole('button', { name: 'Delete customer' }).click();
      await page.waitForURL(/\/dashboard\/customers\?done=deleted$/);
      expect((await t.request('GET', `/v1/customers/${id}`, { key: account.test })).status).toBe(404);
      expect(violations).toEqual([]);
    });
  });

  it('when the list is read on a phone, then nothing is wider than the screen', async () => {
    for (let i = 0; i < 3; i++) await t.request('POST', '/v1/customers', { key: account.test, body: { email: `phone${i}@example.com`, first_name: 'Phone', last_name: `Person ${i}`, company_name: 'A Company With A Long Name Ltd' } });
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/customers`);
      expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/customers-list-phone.png`, fullPage: true });
      await page.getByRole('link', { name: 'phone0@example.com' }).click();
      expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      expect(violations).toEqual([]);
    });
  });
});
