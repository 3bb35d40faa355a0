import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildReports } from '../../src/reports/store.ts';
import { DESKTOP, fitsWidth, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { DIGITS } from '../helpers/cards.ts';
import { useTestServer } from '../helpers/server.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';

const t = useTestServer();
let browser: Browser;
let accountId = '';

beforeAll(async () => {
  const a = await t.account();
  accountId = a.accountId;
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${accountId}`;
  // Today's payments through the API (the hooks), and 60 days of history seeded through SQL.
  for (const [amount, currency, card] of [
    [4000, 'eur', DIGITS.visa],
    [2500, 'eur', DIGITS.declined],
    [1999, 'usd', DIGITS.visa],
    [900, 'usd', DIGITS.insufficientFunds],
  ] as const) {
    const cs = await t.request('POST', '/v1/checkout/sessions', { key: a.test, body: { amount, currency, success_url: 'https://example.com/ok' } });
    await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key: a.test, body: { card } });
  }
  await t.sql`
    insert into payments (id, account_id, livemode, status, amount_cents, currency, failure_code, succeeded_at, failed_at)
    select 'pay_hist' || g || ${accountId}, ${accountId}, false, case when g % 6 = 0 then 'FAILED' else 'SUCCEEDED' end,
      1000 + (g * 379) % 9000, case when g % 4 = 0 then 'usd' else 'eur' end,
      case when g % 6 = 0 then (array['card_declined', 'insufficient_funds', 'expired_card'])[1 + g % 3] end,
      case when g % 6 <> 0 then now() - (g % 60) * interval '1 day' end, case when g % 6 = 0 then now() - (g % 60) * interval '1 day' end
    from generate_series(1, 300) g`;
  await t.sql`
    insert into refunds (id, account_id, livemode, payment_id, amount_cents, currency, status, updated_at)
    select 're_hist' || id, account_id, false, id, amount_cents / 2, currency, 'SUCCEEDED', succeeded_at + interval '1 hour'
    from payments where account_id = ${accountId} and id like 'pay_hist%' and status = 'SUCCEEDED' and amount_cents % 7 = 0`;
  await t.sql.begin((sql) => rebuildReports(sql, accountId));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('Reports in Chromium', () => {
  it('when the owner opens Reports from the navigation, then charts and tables per currency show, the table agrees with SQL, and the CSP holds', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, accountId, 'owner@tearoom.example');
      await page.getByRole('link', { name: 'Reports' }).click();
      await page.waitForURL(/\/dashboard\/reports$/);
      expect(await page.getByRole('heading', { name: 'EUR' }).count()).toBe(1);
      expect(await page.getByRole('heading', { name: 'USD' }).count()).toBe(1);
      const gross = page.getByRole('img', { name: /^Gross volume in EUR per day/ });
      expect(await gross.count()).toBe(1);
      expect(await page.locator('svg[data-chart="gross-eur"] rect').count()).toBe(30);
      // The volume table's Gross column for today, against SQL.
      const today = new Date().toISOString().slice(0, 10);
      const [sum] = await t.sql<{ gross: string }[]>`
        select sum(amount_cents)::text as gross from payments where account_id = ${accountId} and currency = 'eur' and status = 'SUCCEEDED'
          and (succeeded_at at time zone 'utc')::date = ${today}::date`;
      const row = page.locator('[data-currency="eur"] [data-table="volume"] tbody tr', { hasText: today });
      const grossCell = await row.locator('td').nth(1).innerText();
      expect(grossCell.replace(/[^0-9]/g, '')).toBe(sum!.gross);
      await page.screenshot({ path: `${SHOTS}/reports-desktop.png`, fullPage: true });

      // By month, in one currency, with the keyboard: the range typed stays (the 30 days), now in months.
      await page.getByLabel('Period', { exact: true }).selectOption('month');
      await page.getByLabel('Currency', { exact: true }).selectOption('usd');
      await page.getByRole('button', { name: 'Show' }).press('Enter');
      await page.waitForURL(/interval=month/);
      expect(await page.getByRole('heading', { name: 'EUR' }).count()).toBe(0);
      const months = new Set([today.slice(0, 7), new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 7)]).size;
      expect(await page.locator('svg[data-chart="gross-usd"] rect').count()).toBe(months);
      expect(await page.locator('[data-currency="usd"] [data-table="volume"] tbody tr').count()).toBe(months);
      expect(await page.locator('[data-currency="usd"] [data-table="declines"] tbody tr').count()).toBeGreaterThan(0);
      await page.screenshot({ path: `${SHOTS}/reports-month-desktop.png`, fullPage: true });

      // A table's CSV, downloaded by the browser.
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-download="volume"]').first().click()]);
      expect(download.suggestedFilename()).toMatch(/^report-volume-usd-test-month-.*\.csv$/);
      expect(violations).toEqual([]);
    });
  });

  it('when Reports is opened on a phone, then it fits the screen', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/reports?interval=week`);
      expect(await page.locator('svg[data-chart="counts-eur"]').isVisible()).toBe(true);
      expect(await fitsWidth(page)).toBe(true);
      await page.screenshot({ path: `${SHOTS}/reports-phone.png`, fullPage: true });
      await page.locator('[data-currency="eur"]').first().screenshot({ path: `${SHOTS}/reports-phone-eur.png` });
      await page.locator('[data-currency="eur"] [data-table="volume"]').screenshot({ path: `${SHOTS}/reports-phone-volume.png` });
      expect(violations).toEqual([]);
    });
  });
});
