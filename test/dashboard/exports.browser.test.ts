import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportsWorker } from '../../workers/exports.ts';
import { DESKTOP, fitsWidth, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';

const t = useTestServer({ workers: [exportsWorker] });
let browser: Browser;
let account: { accountId: string; test: string; live: string };

beforeAll(async () => {
  account = await t.account();
  const cs = await t.request('POST', '/v1/checkout/sessions', { key: account.test, body: { amount: 4000, currency: 'eur', success_url: 'https://example.com/ok' } });
  await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key: account.test, body: { card: '4242424242424242', email: 'ada@example.com', name: 'Ada' } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('exports in the dashboard, in Chromium', () => {
  it('when an analyst starts an export with the keyboard, then the page lists it and, once written, its file downloads', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'analyst@tearoom.example');
      await t.sql`update dashboard_users set role = 'analyst' where email = 'analyst@tearoom.example'`;
      await page.goto(`${t.url}/dashboard/exports`);
      await page.getByLabel('Records').selectOption('payments');
      await page.getByLabel('Status (optional)').fill('succeeded');
      await page.getByLabel('Status (optional)').press('Enter');
      await page.waitForURL(/done=started/);
      expect(await page.locator('main [role="status"]').first().innerText()).toContain('The export has started');
      // Written in the background: the page shows the file once the worker is done.
      const link = page.getByRole('link', { name: /Download CSV/ });
      await expect.poll(async () => (await page.reload(), await link.count()), { timeout: 20_000 }).toBe(1);
      const download = page.waitForEvent('download');
      await link.focus();
      await page.keyboard.press('Enter');
      expect((await download).suggestedFilename()).toMatch(/^payments-test-all-to-all\.csv$/);
      await page.screenshot({ path: `${SHOTS}/exports-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
    await withPage(browser, PHONE, async (page) => {
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/exports`);
      await page.screenshot({ path: `${SHOTS}/exports-phone.png`, fullPage: true });
      expect(await fitsWidth(page)).toBe(true);
    });
  }, 90_000);
});
