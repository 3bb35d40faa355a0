import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, launchBrowser, withWatchedPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { invoiceRow, sentInvoice } from './page-helpers.ts';
import { CARDS } from '../helpers/cards.ts';

/** Where the screenshots for people go (listed in the report). */
const SHOTS = '/work/shots';

const t = useTestServer();
let key: string;
let browser: Browser;
beforeAll(async () => {
  const account = await t.account();
  key = account.test;
  await t.sql`update accounts set business_name = 'Harbour Tea Rooms' where id = ${account.accountId}`;
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const withPage = <T>(width: number, work: (page: Page, problems: string[]) => Promise<T>) => withWatchedPage(browser, width, work);

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

/** On the hosted checkout: the card form, 4242, Pay; the email comes from the invoice's customer. */
async function payOnCheckout(page: Page) {
  await page.waitForURL(/\/checkout\/cs_/);
  expect(await page.getByLabel('Email').inputValue()).toBe('ada@example.com');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
  await page.getByLabel('Card number').fill(CARDS.visa);
  await page.getByLabel('Expiry').fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: /^Pay/ }).click();
  await page.waitForURL(/\/invoices\/[A-Za-z0-9_-]+\?paid=cs_/);
}

const items = [
  { name: 'Afternoon tea for 12, private room', quantity: 1, amount: 42_000 },
  { name: 'Scones, extra tray', quantity: 3, amount: 1_500 },
  { name: 'Room hire (per hour)', quantity: 2, amount: 5_000 },
];

describe('the hosted invoice page in Chromium', () => {
  it('when the payer pays in full, then the page confirms it, shows Paid and offers no button; the screenshots are saved', async () => {
    const inv = await sentInvoice(t, key, { line_items: items, description: 'Private event, Saturday 14 June' });
    for (const width of [1280, 390]) {
      await withPage(width, async (page, problems) => {
        await page.goto(inv.hosted_invoice_url);
        expect(await page.locator('h1').textContent()).toBe(`Invoice ${inv.number}`);
        await page.getByText('Harbour Tea Rooms').waitFor();
        await page.getByRole('button', { name: 'Pay $565.00' }).waitFor();
        await shot(page, `invoice-open-${width < 500 ? 'phone' : 'desktop'}`);
        expect(problems).toEqual([]);
      });
    }
    await withPage(1280, async (page, problems) => {
      await page.goto(inv.hosted_invoice_url);
      await page.getByRole('button', { name: 'Pay $565.00' }).click();
      await payOnCheckout(page);
      await page.getByText('Payment of $565.00 received. Thank you! This invoice is now paid in full.').waitFor();
      expect(await page.getByRole('button').count()).toBe(0);
      expect(await page.locator('form').count()).toBe(0);
      expect(problems).toEqual([]);
    });
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
    for (const width of [1280, 390]) {
      await withPage(width, async (page) => {
        await page.goto(inv.hosted_invoice_url);
        await page.getByText('This invoice is paid.').waitFor();
        expect(await page.locator('.badges').textContent()).toContain('Paid');
        expect(await page.getByRole('button').count()).toBe(0);
        await shot(page, `invoice-paid-${width < 500 ? 'phone' : 'desktop'}`);
      });
    }
  });

  it('when the payer pays in two parts with the keyboard, then each round lowers the amount due, a bad amount is named beside the field, and the second makes it PAID', async () => {
    const inv = await sentInvoice(t, key, { line_items: items, allow_partial_payments: true, minimum_payment_cents: 5_000 });
    await withPage(390, async (page, problems) => {
      await page.goto(inv.hosted_invoice_url);
      const amount = page.getByLabel('Amount to pay (USD)');
      expect(await amount.inputValue()).toBe('565.00');
      await page.getByText('Any amount from $50.00 to $565.00.').waitFor();

      // A bad amount: the page comes back with the message tied to the field.
      await amount.fill('12.345');
      await amount.press('Enter');
      await page.getByText('The amount to pay can have at most 2 decimals in USD.').waitFor();
      expect(await amount.getAttribute('aria-invalid')).toBe('true');
      expect(await amount.getAttribute('aria-describedby')).toContain('amount-error');

      // Keyboard only: focus the field from the top of the page, type, press Enter.
      await page.goto(inv.hosted_invoice_url);
      const focused = async () => (await page.locator('#amount:focus').count()) === 1;
      for (let i = 0; i < 10 && !(await focused()); i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe(true);
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('200');
      await page.keyboard.press('Enter');
      await payOnCheckout(page);
      await page.getByText('Payment of $200.00 received. Thank you! The amount due is now $365.00.').waitFor();
      expect(await page.getByLabel('Amount to pay (USD)').inputValue()).toBe('365.00');
      await shot(page, 'invoice-partial-phone');
      expect(problems).toEqual([]);
    });
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'OPEN', amount_paid_cents: 20_000, amount_due_cents: 36_500 });

    await withPage(1280, async (page) => {
      await page.goto(inv.hosted_invoice_url);
      await page.getByText('$365.00').first().waitFor();
      await shot(page, 'invoice-partial-desktop');
      await page.getByRole('button', { name: 'Pay' }).click();
      await payOnCheckout(page);
      await page.getByText('Payment of $365.00 received. Thank you! This invoice is now paid in full.').waitFor();
      expect(await page.getByRole('button').count()).toBe(0);
    });
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_paid_cents: 56_500, amount_due_cents: 0 });
  });

  it('when Download PDF is clicked, then the browser downloads INV-….pdf and its bytes are a PDF', async () => {
    const inv = await sentInvoice(t, key, { line_items: items });
    await withPage(1280, async (page, problems) => {
      await page.goto(inv.hosted_invoice_url);
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PDF' }).click()]);
      expect(download.suggestedFilename()).toBe(`${inv.number}.pdf`);
      // saveAs: the browser is the project's shared one, connected over its socket (no local path).
      const file = join(ARTIFACTS_DIR, `download-${inv.number}.pdf`);
      await mkdir(ARTIFACTS_DIR, { recursive: true });
      await download.saveAs(file);
      const bytes = await readFile(file);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(bytes.length).toBeGreaterThan(1000);
      expect(problems).toEqual([]);
    });
  });
});
