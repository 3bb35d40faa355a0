import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withClipboard, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';
import { emit } from '../helpers/events.ts';
import { createEndpoint } from '../helpers/factories.ts';
import { useReceiver, verifyWithStripe } from '../helpers/receiver.ts';

const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: '20' } });
let browser: Browser;
const rx = useReceiver((_n, r) => (r.path.startsWith('/down') && !healed.has(r.path) ? 500 : 200));
let account: { accountId: string; test: string; live: string };
const healed = new Set<string>();

beforeAll(async () => {
  account = await t.account();
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${account.accountId}`;
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const shot = (page: Page, what: string, device: 'desktop' | 'phone') => page.screenshot({ path: `${SHOTS}/webhooks-${what}-${device}.png`, fullPage: true });
const fitsPhone = async (page: Page) => expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
const heading = (page: Page) => page.getByRole('heading', { level: 1 }).innerText();
const forPath = (path: string) => (r: { path: string }) => r.path === path;

/** Reloads the page until `text` shows (a worker is delivering meanwhile). */
async function reloadUntil(page: Page, text: string) {
  await eventually(async () => {
    await page.reload();
    return (await page.getByText(text, { exact: true }).count()) > 0;
  }, 15_000, 200);
}

describe('webhooks in Chromium', () => {
  it('when a merchant adds an endpoint, then the secret is shown once and the Copy button puts exactly the stored secret on the clipboard; pause, resume and a test event work from the endpoint page', async () => {
    await withPage(browser, DESKTOP, async (page, context) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Webhooks' }).click();
      expect(await heading(page)).toBe('Webhooks');
      await page.getByRole('link', { name: 'Add endpoint' }).click();
      await page.getByLabel('Endpoint URL').fill(`${rx.url}/orders`);
      await page.getByLabel('Description').fill('Order fulfilment');
      await page.getByLabel('payment.succeeded').check();
      await page.getByLabel('refund.updated').check();
      await page.getByLabel('Rate limit (deliveries per second)').fill('10');
      await page.getByLabel(/^Ordered/).check();
      await shot(page, 'form', 'desktop');
      await page.getByRole('button', { name: 'Add endpoint' }).click();

      expect(await heading(page)).toBe('Endpoint added');
      const shown = await page.locator('code[data-secret]').innerText();
      const [row] = await t.sql<{ id: string; secret: string; rate_limit: number; ordered: boolean }[]>`select id, secret, rate_limit, ordered from webhook_endpoints where account_id = ${account.accountId}`;
      expect(shown).toBe(row!.secret);
      expect(row).toMatchObject({ rate_limit: 10, ordered: true });
      // Copy with the keyboard: the button has the focus, Enter presses it.
      const copy = page.getByRole('button', { name: 'Copy the signing secret' });
      await withClipboard(async () => {
        await copy.focus();
        await page.keyboard.press('Enter');
        await expect.poll(() => copy.innerText()).toBe('Copied');
        expect(await (page.evaluate('navigator.clipboard.readText()') as Promise<string>)).toBe(row!.secret);
      });
      await shot(page, 'secret', 'desktop');

      // A reload re-posts the form: the endpoint's page, without the secret.
      await page.reload();
      await page.waitForURL(`${t.url}/dashboard/webhooks/${row!.id}`);
      expect(await heading(page)).toBe('Order fulfilment');
      expect(await page.content()).not.toContain(row!.secret);

      await page.getByRole('button', { name: 'Pause' }).click();
      await page.waitForURL(/done=paused$/);
      expect(await page.getByText('PAUSED', { exact: true }).count()).toBe(1);
      expect((await t.sql`select is_active from webhook_endpoints where id = ${row!.id}`)[0]!.is_active).toBe(false);
      await page.getByRole('button', { name: 'Resume' }).click();
      await page.waitForURL(/done=resumed$/);
      expect(await page.getByText('ACTIVE', { exact: true }).count()).toBe(1);

      await page.getByLabel('Event type').selectOption('checkout.session.completed');
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.waitForURL(/\/deliveries\?done=test_sent$/);
      const [req] = await rx.waitFor(1, 10_000, forPath('/orders'));
      const event = verifyWithStripe(req!, row!.secret);
      expect(event.type).toBe('checkout.session.completed');
      await reloadUntil(page, 'SUCCEEDED');
      const link = page.getByRole('link', { name: /checkout\.session\.completed/ });
      expect(await link.getAttribute('href')).toBe(`/dashboard/events/${event.id}`);
      expect(await page.getByText('Test event', { exact: true }).count()).toBe(1);
      await shot(page, 'deliveries', 'desktop');

      await page.goto(`${t.url}/dashboard/webhooks/${row!.id}`);
      await shot(page, 'detail', 'desktop');
      await page.getByRole('link', { name: 'Rotate secret' }).click();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      expect(await heading(page)).toBe('Signing secret rotated');
      const rotated = await page.locator('code[data-secret]').innerText();
      expect((await t.sql`select secret from webhook_endpoints where id = ${row!.id}`)[0]!.secret).toBe(rotated);
      await page.getByRole('link', { name: 'Done: go to the endpoint' }).click();
      expect(await page.getByText(/Rotation in progress/).count()).toBe(1);
      expect(violations).toEqual([]);
    });
  });

  it('when deliveries have failed, then the failed view lists them and "retry all failed since" sends them again, with the count', async () => {
    const ep = await createEndpoint(t, account.test, { url: `${rx.url}/down-browser`, description: 'Accounting export' });
    for (const type of ['payment.failed', 'payment.succeeded', 'refund.created'] as const) await emit(t, account.accountId, false, type);
    await eventually(async () => {
      const rows = await t.sql`select status from webhook_deliveries where endpoint_id = ${ep.id}`;
      return rows.length === 3 && rows.every((r) => r.status === 'FAILED');
    }, 30_000);
    healed.add('/down-browser');
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/webhooks/${ep.id}`);
      await page.getByRole('link', { name: 'Failed deliveries' }).click();
      expect(await heading(page)).toBe('Failed deliveries');
      expect(await page.getByText('FAILED', { exact: true }).count()).toBe(3);
      await page.getByLabel('Failed since (UTC)').fill(new Date(Date.now() - 3600_000).toISOString().slice(0, 16));
      await shot(page, 'failed', 'desktop');
      await page.getByRole('button', { name: 'Retry all failed since this time' }).click();
      await page.waitForURL(/retried=3$/);
      expect(await page.getByRole('status').first().innerText()).toContain('3 failed deliveries were sent again.');
      await reloadUntil(page, 'SUCCEEDED');
      await eventually(async () => (await t.sql`select 1 from webhook_deliveries where endpoint_id = ${ep.id} and status = 'SUCCEEDED'`).length === 3);
      await page.reload();
      await shot(page, 'retried', 'desktop');
      expect(violations).toEqual([]);
    });
  });

  it('when the pages are used on a phone, then nothing is wider than the screen and the secret can still be copied', async () => {
    await withPage(browser, PHONE, async (page, context) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
      const violations = cspViolations(page);
      await signInBrowser(page, t, account.accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/webhooks`);
      await fitsPhone(page);
      await shot(page, 'list', 'phone');
      await page.getByRole('link', { name: 'Add endpoint' }).click();
      await fitsPhone(page);
      await shot(page, 'form', 'phone');
      await page.getByLabel('Endpoint URL').fill(`${rx.url}/phone-with-a-rather-long-path/that-keeps-going/and-going`);
      await page.getByLabel('All events (*)').check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      expect(await heading(page)).toBe('Endpoint added');
      await fitsPhone(page);
      const [row] = await t.sql<{ id: string; secret: string }[]>`select id, secret from webhook_endpoints where url like '%/phone-with-a-rather-long-path/%'`;
      await withClipboard(async () => {
        await page.getByRole('button', { name: 'Copy the signing secret' }).click();
        await page.getByRole('button', { name: 'Copy the signing secret' }).filter({ hasText: 'Copied' }).waitFor();
        expect(await (page.evaluate('navigator.clipboard.readText()') as Promise<string>)).toBe(row!.secret);
      });
      await shot(page, 'secret', 'phone');
      await page.getByRole('link', { name: 'Done: go to the endpoint' }).click();
      await fitsPhone(page);
      await shot(page, 'detail', 'phone');
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.waitForURL(/done=test_sent$/);
      await reloadUntil(page, 'SUCCEEDED');
      await fitsPhone(page);
      await shot(page, 'deliveries', 'phone');
      await page.goto(`${t.url}/dashboard/webhooks`);
      const failing = await t.sql<{ id: string }[]>`select id from webhook_endpoints where url like '%/down-browser'`;
      if (failing[0]) {
        await page.goto(`${t.url}/dashboard/webhooks/${failing[0].id}/deliveries?status=FAILED`);
        await fitsPhone(page);
        await shot(page, 'failed', 'phone');
      }
      expect(violations).toEqual([]);
    });
  });
});
