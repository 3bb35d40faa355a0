import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';
import { createSession, disputed } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

// Workers: the refund settles through its job, and the dispute is learnt of through the disputes job.
const t = useTestServer({ workers: true });
let browser: Browser;
let account: { accountId: string; test: string; live: string };
let teaPot: string; // 49.00 usd, SUCCEEDED, of a customer
let disputedPayment: string;

const widthOf = (page: Page) => page.locator('html').evaluate((el) => el.scrollWidth);

beforeAll(async () => {
  account = await t.account();
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${account.accountId}`;
  const cus = await t.request('POST', '/v1/customers', { key: account.test, body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' } });
  for (const [amount, card, description] of [
    [1250, CARDS.visa, 'Loose-leaf green tea, 100 g'],
    [3000, CARDS.declined, 'Gift box'],
    [4900, CARDS.visa, 'Ceramic teapot and two cups'],
  ] as const) {
    const cs = await createSession(t, account.test, { amount, description, customer_id: cus.body.id });
    await new Payer(t).pay(cs.id, { card_number: card });
    const [row] = await t.sql`select id from payments where checkout_session_id = ${cs.id}`;
    if (amount === 4900) teaPot = row!.id;
  }
  disputedPayment = (await disputed(t, account.test, 2200)).paymentId;
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

describe('payments in Chromium', () => {
  it('when a merchant filters the list, opens a payment and refunds part of it with the keyboard, then the refund is listed and settles', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Payments' }).click();
      await page.waitForURL(`${t.url}/dashboard/payments`);
      expect(await page.locator('tbody tr').count()).toBe(4);
      expect(await page.getByText('Visa •••• 4242').count()).toBeGreaterThan(0);
      await page.screenshot({ path: `${SHOTS}/payments-list-desktop.png`, fullPage: true });

      // Only the failed ones, then only the succeeded ones.
      await page.getByLabel('Status').selectOption('FAILED');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=FAILED/);
      expect(await page.locator('tbody tr').count()).toBe(1);
      expect(await page.locator('tbody').innerText()).toContain('Gift box');
      await page.getByLabel('Status').selectOption('SUCCEEDED');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=SUCCEEDED/);
      expect(await page.locator('tbody tr').count()).toBe(3);

      await page.getByRole('link', { name: '$49.00' }).click();
      await page.waitForURL(`${t.url}/dashboard/payments/${teaPot}`);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('$49.00 USD');
      expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('49.00');

      // The keyboard only: the amount, Tab to the reason, a choice with the arrow key, Tab to Refund, Enter.
      await page.getByLabel('Amount (USD)').focus();
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('12.50');
      await page.keyboard.press('Tab');
      expect(await page.locator(':focus').getAttribute('id')).toBe('reason');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Tab');
      expect(await page.locator(':focus').innerText()).toBe('Refund');
      await page.keyboard.press('Enter');
      // Pending until the processor answers; settled already when it answered within the request.
      await page.waitForURL(new RegExp(`/dashboard/payments/${teaPot}\\?done=refund_(pending|succeeded)$`));
      expect(await page.getByRole('status').first().innerText()).toMatch(/Refund created. It is pending until the card processor confirms it|Refund made/);
      const refunds = page.locator('#refunds tbody');
      expect(await refunds.innerText()).toContain('$12.50');
      expect(await refunds.innerText()).toMatch(/PENDING|SUCCEEDED/);
      const [row] = await t.sql`select amount_cents, reason from refunds where payment_id = ${teaPot}`;
      expect(row).toEqual({ amount_cents: 1250, reason: 'duplicate' });

      // The refunds job settles it; a reload shows it (the page reads the payment, then its refunds:
      // a settling committed between the two reads shows on the next reload).
      await eventually(async () => {
        await page.reload();
        return (await refunds.innerText()).includes('SUCCEEDED') && (await page.locator('.pay-badges').first().innerText()).includes('PARTLY REFUNDED');
      }, 15_000, 250);
      expect(await page.getByRole('status').first().innerText()).toBe('Refund made: the card processor has confirmed it.');
      expect(await page.locator('.pay-badges').first().innerText()).toContain('PARTLY REFUNDED');
      expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('36.50');
      await page.screenshot({ path: `${SHOTS}/payments-detail-refunded-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });

  it('when a payment is disputed, then its evidence form saves what is typed (as the browser sends it)', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/payments/${disputedPayment}`);
      expect(await page.getByText('NEEDS RESPONSE').count()).toBe(1);
      expect(await page.getByText('This payment is disputed: it cannot be refunded while the dispute stands.').count()).toBe(1);
      await page.getByLabel('Customer name').fill('Ada Lovelace');
      await page.getByLabel('Product description').fill('A ceramic teapot, shipped on 3 May.\nSigned for on delivery.');
      await page.getByRole('button', { name: 'Save evidence' }).click();
      await page.waitForURL(/done=evidence_saved$/);
      expect(await page.getByRole('status').first().innerText()).toContain('Evidence saved.');
      expect(await page.getByLabel('Product description').inputValue()).toBe('A ceramic teapot, shipped on 3 May.\nSigned for on delivery.');
      const [row] = await t.sql`select status, evidence from disputes where payment_id = ${disputedPayment}`;
      expect(row).toEqual({
        status: 'NEEDS_RESPONSE',
        evidence: { customer_name: 'Ada Lovelace', product_description: 'A ceramic teapot, shipped on 3 May.\nSigned for on delivery.' },
      });
      await page.screenshot({ path: `${SHOTS}/payments-dispute-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });

  it('when read on a phone, then the list, a payment and a dispute fit the screen', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/payments`);
      expect(await widthOf(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/payments-list-phone.png`, fullPage: true });
      await page.goto(`${t.url}/dashboard/payments/${teaPot}`);
      expect(await widthOf(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/payments-detail-phone.png`, fullPage: true });
      await page.goto(`${t.url}/dashboard/payments/${disputedPayment}`);
      expect(await widthOf(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/payments-dispute-phone.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });
});
