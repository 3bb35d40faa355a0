import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';
import { createEndpoint, createSession } from '../helpers/factories.ts';
import { useReceiver, verifyWithStripe } from '../helpers/receiver.ts';

const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
let browser: Browser;
const rx = useReceiver((_n, r) => (r.path === '/crm' ? { status: 503, body: 'Service unavailable: <maintenance until 14:00>' } : { status: 200, body: '{"received":true}' }));
let accountId: string;
let key: string;
let shop: Awaited<ReturnType<typeof createEndpoint>>;
const EMAIL = 'owner@tearoom.example';

beforeAll(async () => {
  const acct = await t.account();
  accountId = acct.accountId;
  key = acct.test;
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${accountId}`;
  shop = await createEndpoint(t, key, { url: `${rx.url}/shop`, enabled_events: ['*'] });
  await createEndpoint(t, key, { url: `${rx.url}/crm`, enabled_events: ['payment.succeeded'] });
  // What a day at the shop leaves in the log: an expired session, then an order paid on the hosted page.
  const cs = await createSession(t, key, { amount: 2500, description: 'Gift card' });
  await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
  const paid = await createSession(t, key, { amount: 4900, description: 'Order #1042' });
  await new Payer(t).pay(paid.id);
  await rx.waitFor(3, 10_000, (r) => r.path === '/shop');
  await rx.waitFor(1, 10_000, (r) => r.path === '/crm');
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const pageWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');
const focusedText = (page: Page) => page.evaluate<string>('document.activeElement ? document.activeElement.textContent.trim() : ""');

/** Presses Tab until the element whose text is `text` has the focus (at most `max` presses). */
async function tabTo(page: Page, text: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if ((await focusedText(page)) === text) return;
  }
  throw new Error(`"${text}" never got the focus`);
}

describe('the Events section in Chromium', () => {
  it('on a desktop: lists, filters by type, opens an event, reads its payload, resends with the keyboard and sees the new deliveries', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, accountId, EMAIL);
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Events' }).click();
      await page.waitForURL(`${t.url}/dashboard/events`);
      const rows = page.locator('main tbody tr');
      expect(await rows.count()).toBe(3);
      expect(await rows.first().innerText()).toContain('payment.succeeded');
      await page.screenshot({ path: `${SHOTS}/events-list-desktop.png`, fullPage: true });

      await page.getByLabel('Type').selectOption('checkout.session.expired');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/type=checkout\.session\.expired/);
      expect(await rows.count()).toBe(1);
      expect(await rows.first().innerText()).toContain('Checkout session');

      await page.getByLabel('Type').selectOption('payment.succeeded');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/type=payment\.succeeded/);
      await rows.first().getByRole('link').click();
      await page.waitForURL(/\/dashboard\/events\/evt_/);
      const eventId = new URL(page.url()).pathname.split('/').pop()!;
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('payment.succeeded');
      const payload = JSON.parse(await page.locator('#payload pre').innerText());
      const api = await t.request('GET', `/v1/events/${eventId}`, { key });
      expect(payload).toEqual(api.body);
      expect(await page.locator('#deliveries .delivery').count()).toBe(2);
      // The failing endpoint's answer, shown as text.
      expect(await page.locator('#deliveries').innerText()).toContain('Service unavailable: <maintenance until 14:00>');

      // Resend with the keyboard only.
      const before = rx.received.filter((r) => r.path === '/shop').length;
      await page.locator('h1').click();
      await tabTo(page, 'Resend to all subscribed endpoints');
      await page.keyboard.press('Enter');
      await page.waitForURL(/done=resent&count=2/);
      expect(await page.getByRole('status').filter({ hasText: 'Event resent' }).innerText()).toContain('2 new deliveries were created');
      const again = (await rx.waitFor(before + 1, 10_000, (r) => r.path === '/shop'))[before]!;
      expect(verifyWithStripe(again, shop.signing_secret).id).toBe(eventId);
      // Both new deliveries made their first attempt: the shop's answered 200, the CRM's 503.
      await eventually(async () => {
        const fresh = await t.sql`select attempt_count from webhook_deliveries where event_id = ${eventId} order by id desc limit 2`;
        return fresh.every((d) => d.attempt_count === 1);
      });
      await page.reload();
      const blocks = page.locator('#deliveries .delivery');
      expect(await blocks.count()).toBe(4);
      const newest = [await blocks.nth(0).innerText(), await blocks.nth(1).innerText()].join('\n');
      expect(newest).toContain(`SUCCEEDED\n${rx.url}/shop`);
      expect(newest).toContain(`PENDING\n${rx.url}/crm`);
      expect(newest).toMatch(/\b200\s+\d+ ms/);
      expect(newest).toMatch(/\b503\s+\d+ ms/);
      await page.screenshot({ path: `${SHOTS}/events-detail-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });

  it('on a phone: nothing is wider than the screen; resend to one endpoint from the select', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, accountId, EMAIL);
      await page.goto(`${t.url}/dashboard/events`);
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: `${SHOTS}/events-list-phone.png`, fullPage: true });
      await page.locator('main tbody tr').first().getByRole('link').click();
      await page.waitForURL(/\/dashboard\/events\/evt_/);
      const eventId = new URL(page.url()).pathname.split('/').pop()!;
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);

      const before = rx.received.filter((r) => r.path === '/shop').length;
      const crmBefore = rx.received.filter((r) => r.path === '/crm').length;
      await page.getByLabel('Endpoint').selectOption(shop.id);
      await page.getByRole('button', { name: 'Resend to one endpoint' }).click();
      await page.waitForURL(/done=resent&count=1/);
      expect(await page.getByRole('status').filter({ hasText: 'Event resent' }).innerText()).toContain('1 new delivery was created');
      const got = await rx.waitFor(before + 1, 10_000, (r) => r.path === '/shop');
      expect(verifyWithStripe(got[before]!, shop.signing_secret).id).toBe(eventId);
      expect(rx.received.filter((r) => r.path === '/crm')).toHaveLength(crmBefore);
      await eventually(async () => {
        await page.reload();
        return (await page.locator('#deliveries .delivery').first().innerText()).includes('SUCCEEDED');
      });
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: `${SHOTS}/events-detail-phone.png`, fullPage: true });
      await page.locator('#deliveries').screenshot({ path: `${SHOTS}/events-deliveries-phone.png` });
      await page.locator('#resend').screenshot({ path: `${SHOTS}/events-resend-phone.png` });
      expect(violations).toEqual([]);
    });
  });
});
