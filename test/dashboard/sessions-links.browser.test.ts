import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkCountersWorker } from '../../workers/link-counters.ts';
import { DESKTOP, launchBrowser, PHONE, withClipboard, withPage } from '../helpers/browser.ts';
import { pathOf, Payer, payThroughLink } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';
import { createLink, createSession, teaRoomOrder } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer({ workers: [linkCountersWorker] });
let browser: Browser;
let acct: { accountId: string; test: string; live: string };
/** A link with views and payments from several sources, for the analytics. */
let busy: { id: string; url: string };

beforeAll(async () => {
  acct = await t.account();
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${acct.accountId}`;
  busy = await createLink(t, acct.test, { name: 'Tasting evening (internal)', description: 'Tea tasting evening, 12 March', amount: 3500, slug: 'tea-tasting' });
  for (const src of ['QR', 'QR', 'QR', 'WHATSAPP', 'WHATSAPP', 'DIRECT']) await new Payer(t).get(`${pathOf(busy.url)}?src=${src}`);
  await payThroughLink(t, `${busy.url}?src=QR`);
  await payThroughLink(t, `${busy.url}?src=QR`);
  await payThroughLink(t, `${busy.url}?src=WHATSAPP`);
  await eventually(async () => (await t.sql`select payment_count from payment_links where id = ${busy.id}`)[0]!.payment_count === 3);
  // Sessions of the list: one paid, one declined then left open, one expired by time.
  const paid = await createSession(t, acct.test, { ...teaRoomOrder('https://tearoom.example'), customer_email: 'ada@example.com' });
  await new Payer(t).pay(paid.id);
  const declined = await createSession(t, acct.test, { amount: 1250, customer_email: 'grace@example.com' });
  await new Payer(t).pay(declined.id, { card_number: CARDS.declined });
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const focusedId = (page: Page) => page.locator(':focus').getAttribute('id');
const pageWidth = (page: Page) => page.locator('html').evaluate((el) => el.scrollWidth);
const qrWidth = (page: Page) => page.locator('img.qr').evaluate((el) => (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth);

describe('checkout sessions and payment links in Chromium', () => {
  it('creates a link with the keyboard, copies its URL, shows its QR code, then deactivates it', async () => {
    await withPage(browser, DESKTOP, async (page, context) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
      const violations = cspViolations(page);
      await signInBrowser(page, t, acct.accountId, 'owner@tearoom.example');
      await page.getByRole('link', { name: 'Payment links' }).click();
      await page.getByRole('link', { name: 'New payment link' }).click();
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('New payment link');

      // The form by keyboard alone: each field is the next Tab stop, Space ticks a box, Enter submits.
      await page.getByLabel('Amount').focus();
      await page.keyboard.type('18.50');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('currency');
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('gbp');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('type');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('name');
      await page.keyboard.type('Yoga in the garden (internal)');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Saturday yoga class in the tea garden');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('slug');
      await page.keyboard.type('garden-yoga');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('collect_name');
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('quantity_limit');
      await page.keyboard.type('12');
      await page.screenshot({ path: `${SHOTS}/payment-links-new-desktop.png`, fullPage: true });
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/dashboard\/payment-links\/pl_[a-z0-9]+\?done=created$/);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Yoga in the garden (internal)');
      expect(await page.getByText('Payment link created.').count()).toBe(1);
      const [row] = await t.sql`select * from payment_links where slug = 'garden-yoga'`;
      expect(row).toMatchObject({ amount_cents: 1850, currency: 'gbp', collect_name: true, collect_email: true, collect_phone: false, quantity_limit: 12 });

      // Copy the public URL: the clipboard holds it.
      const url = `${t.url}/l/garden-yoga`;
      await withClipboard(async () => {
        await page.getByRole('button', { name: 'Copy public URL' }).click();
        await page.getByRole('button', { name: 'Copy public URL' }).filter({ hasText: 'Copied' }).waitFor();
        expect(await page.evaluate('navigator.clipboard.readText()')).toBe(url);
      });

      // The QR code image loads from the dashboard.
      const qr = page.getByRole('img', { name: `QR code of ${t.url}/l/${row!.id}?src=QR` });
      expect(await qr.count()).toBe(1);
      await eventually(async () => (await qrWidth(page)) > 0, 5000);
      await page.screenshot({ path: `${SHOTS}/payment-links-created-desktop.png`, fullPage: true });

      // Deactivate, through the confirmation.
      await page.getByRole('link', { name: 'Deactivate' }).click();
      expect(await page.getByRole('heading', { name: 'Deactivate this payment link?' }).count()).toBe(1);
      await page.getByRole('button', { name: 'Deactivate link' }).click();
      await page.waitForURL(/\?done=cancelled$/);
      expect(await page.getByText('Payment link deactivated').count()).toBe(1);
      expect(row && (await t.sql`select status from payment_links where id = ${row.id}`)[0]!.status).toBe('CANCELLED');
      expect(await page.getByRole('button', { name: 'Reactivate' }).count()).toBe(1);
      await page.goto(url);
      expect(await page.getByText('This payment link has been deactivated by the merchant.').count()).toBe(1);
      expect(violations).toEqual([]);
    });
  });

  it('shows a link’s analytics by source, and opens a session and expires it', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, acct.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/payment-links`);
      await page.screenshot({ path: `${SHOTS}/payment-links-list-desktop.png`, fullPage: true });
      await page.getByRole('link', { name: 'Tasting evening (internal)' }).click();
      const qr = page.getByRole('row', { name: /QR code/ });
      expect(await qr.innerText()).toMatch(/QR code\s+5\s+2\s+\$70\.00/i);
      await eventually(async () => (await qrWidth(page)) > 0, 5000);
      await page.screenshot({ path: `${SHOTS}/payment-links-detail-desktop.png`, fullPage: true });

      const open = await createSession(t, acct.test, { amount: 4200, customer_email: 'open@example.com', description: 'Gift box' });
      await page.getByRole('link', { name: 'Checkout sessions' }).click();
      await page.screenshot({ path: `${SHOTS}/checkout-sessions-list-desktop.png`, fullPage: true });
      await page.locator(`a[href="/dashboard/checkout-sessions/${open.id}"]`).click();
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('$42.00 checkout session');
      await page.getByRole('link', { name: 'Expire session' }).click();
      expect(await page.getByRole('heading', { name: 'Expire this checkout session?' }).count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/checkout-sessions-expire-desktop.png`, fullPage: true });
      await page.getByRole('button', { name: 'Expire session' }).click();
      await page.waitForURL(/\?done=expired$/);
      expect(await page.getByText('The checkout session is expired').count()).toBe(1);
      expect((await t.sql`select status from checkout_sessions where id = ${open.id}`)[0]!.status).toBe('EXPIRED');
      expect(await page.getByRole('link', { name: 'Expire session' }).count()).toBe(0);

      const [paid] = await t.sql`select id from checkout_sessions where account_id = ${acct.accountId} and status = 'COMPLETE' and line_items is not null`;
      await page.goto(`${t.url}/dashboard/checkout-sessions/${paid!.id}`);
      await page.screenshot({ path: `${SHOTS}/checkout-sessions-detail-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });

  it('is readable on a phone: lists, a link with its QR code, a session; nothing wider than the screen', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, acct.accountId, 'owner@tearoom.example');
      const [declined] = await t.sql`select id from checkout_sessions where account_id = ${acct.accountId} and customer_email = 'grace@example.com'`;
      const pages: Array<[string, string]> = [
        ['payment-links-list', '/dashboard/payment-links'],
        ['payment-links-detail', `/dashboard/payment-links/${busy.id}`],
        ['payment-links-edit', `/dashboard/payment-links/${busy.id}/edit`],
        ['checkout-sessions-list', '/dashboard/checkout-sessions'],
        ['checkout-sessions-detail', `/dashboard/checkout-sessions/${declined!.id}`],
        ['checkout-sessions-expire', `/dashboard/checkout-sessions/${declined!.id}?confirm=expire`],
      ];
      for (const [name, path] of pages) {
        await page.goto(`${t.url}${path}`);
        if (name === 'payment-links-detail') await eventually(async () => (await qrWidth(page)) > 0, 5000);
        expect(await pageWidth(page), name).toBeLessThanOrEqual(PHONE.width);
        await page.screenshot({ path: `${SHOTS}/${name}-phone.png`, fullPage: true });
      }
      expect(violations).toEqual([]);
    });
  });
});
