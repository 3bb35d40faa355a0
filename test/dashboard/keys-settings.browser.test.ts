import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { cspViolations, signInBrowser, SHOTS } from './client.ts';
import { createSession, teaRoomOrder } from '../helpers/factories.ts';

// The API keys and Settings sections in Chromium, as a merchant uses them: create a key (shown
// once, with a Copy button), roll it, revoke it, and see the API refuse the old keys; set the
// business name, colour and logo (in live mode: test mode shows them read-only), and see them on a
// hosted checkout page.

const LOGO = 'https://cdn.tea.example/brand/logo.svg';
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40"><rect width="120" height="40" rx="8" fill="#0b6b3a"/><text x="60" y="26" font-family="sans-serif" font-size="16" fill="#fff" text-anchor="middle">TEA&amp;CO</text></svg>`;

const t = useTestServer();
let browser: Browser;
let accountId: string;
let testKey: string;

beforeAll(async () => {
  const a = await t.account();
  accountId = a.accountId;
  testKey = a.test;
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${accountId}`;
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const apiStatus = async (key: string) => (await fetch(`${t.url}/v1/account`, { headers: { authorization: `Bearer ${key}` } })).status;

/** Polls the API every 100 ms until it refuses the key; fails after 5 s. */
async function refusedWithin5s(key: string): Promise<void> {
  await eventually(async () => (await apiStatus(key)) === 401, 5_000, 100).catch(() => {
    throw new Error('the API still accepts the key after 5 s');
  });
}

const noWiderThanPhone = async (page: Page) => expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);

/** The logo's https origin, answered locally (the sandbox has no network). */
const serveLogo = (page: Page) => page.route('https://cdn.tea.example/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: SVG }));

describe('API keys in Chromium', () => {
  it('creates a key shown once with a Copy button, rolls it with no overlap and revokes the new one: the API refuses both old keys', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, accountId, 'owner@tearoom.example');
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
      await page.waitForURL(`${t.url}/dashboard/api-keys`);
      expect(await page.getByText('Test mode: keys made here are test keys').count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/api-keys-list-desktop.png`, fullPage: true });

      await page.getByRole('button', { name: 'Create a test key' }).click();
      const first = await page.locator('[data-secret]').innerText();
      expect(first).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
      // The Copy button is shown by the dashboard's script and carries the secret.
      const copy = page.getByRole('button', { name: 'Copy the new test key' });
      expect(await copy.isVisible()).toBe(true);
      expect(await copy.getAttribute('data-copy')).toBe(first);
      expect(await page.getByText('shown only this once').count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/api-keys-new-desktop.png`, fullPage: true });
      expect(await apiStatus(first)).toBe(200);

      // A reload of the answer goes to the list, without the secret.
      await page.reload();
      await page.waitForURL(`${t.url}/dashboard/api-keys`);
      expect(await page.content()).not.toContain(first);

      // Roll it, with the keyboard: open the key, choose "Stop it now", press Roll key.
      await page.getByRole('link', { name: `sk_test_…${first.slice(-4)}` }).first().click();
      await page.getByRole('link', { name: 'Roll…' }).click();
      await page.getByLabel('Keep the old key working for').selectOption({ label: 'Stop it now' });
      await page.screenshot({ path: `${SHOTS}/api-keys-roll-desktop.png`, fullPage: true });
      await page.getByRole('button', { name: 'Roll key' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('has stopped working').waitFor();
      const second = await page.locator('[data-secret]').innerText();
      expect(second).toMatch(/^sk_test_/);
      expect(second).not.toBe(first);
      await refusedWithin5s(first);
      expect(await apiStatus(second)).toBe(200);

      // Revoke the new key from the list.
      await page.getByRole('link', { name: 'I have stored it: back to API keys' }).click();
      await page.getByRole('link', { name: `Revoke sk_test_…${second.slice(-4)}` }).click();
      await page.getByRole('heading', { name: `Revoke sk_test_…${second.slice(-4)}?` }).waitFor();
      await page.screenshot({ path: `${SHOTS}/api-keys-revoke-desktop.png`, fullPage: true });
      await page.getByRole('button', { name: 'Revoke key' }).click();
      await page.getByText('Key revoked.').waitFor();
      await refusedWithin5s(second);
      // The account's own first key still works.
      expect(await apiStatus(testKey)).toBe(200);
      await page.goto(`${t.url}/dashboard/api-keys`);
      expect(await page.locator('.badge', { hasText: 'Revoked' }).count()).toBe(1);
      expect(await page.locator('.badge', { hasText: 'Expired' }).count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/api-keys-after-desktop.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });

  it('is readable on a phone: the list, a new key and the roll panel fit in 390 px', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, accountId, 'owner@tearoom.example');
      await page.goto(`${t.url}/dashboard/api-keys`);
      await noWiderThanPhone(page);
      await page.screenshot({ path: `${SHOTS}/api-keys-list-phone.png`, fullPage: true });
      await page.getByRole('button', { name: 'Create a test key' }).click();
      const secret = await page.locator('[data-secret]').innerText();
      await noWiderThanPhone(page);
      await page.screenshot({ path: `${SHOTS}/api-keys-new-phone.png`, fullPage: true });
      await page.getByRole('link', { name: 'I have stored it: back to API keys' }).click();
      await page.getByRole('link', { name: `Roll sk_test_…${secret.slice(-4)}` }).click();
      await page.getByLabel('Keep the old key working for').waitFor();
      await noWiderThanPhone(page);
      await page.screenshot({ path: `${SHOTS}/api-keys-roll-phone.png`, fullPage: true });
      expect(violations).toEqual([]);
    });
  });
});

describe('Settings in Chromium', () => {
  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    it(`on a ${label}: sets the name, colour and logo, previews them, and a hosted checkout page shows them`, async () => {
      await withPage(browser, viewport, async (page) => {
        const violations = cspViolations(page);
        await serveLogo(page);
        await signInBrowser(page, t, accountId, 'owner@tearoom.example');
        // Test data (where a user starts): the settings read-only, and the way to live mode (issue 21).
        await page.goto(`${t.url}/dashboard/settings`);
        await page.getByText('so they can be changed in live mode only').waitFor();
        expect(await page.getByLabel('Business name').count()).toBe(0);
        if (viewport === PHONE) await noWiderThanPhone(page);
        await page.screenshot({ path: `${SHOTS}/settings-test-mode-${label}.png`, fullPage: true });
        await page.getByRole('button', { name: 'Switch to live data to change them' }).click();
        await page.getByLabel('Business name').waitFor();
        await page.getByLabel('Business name').fill(`Tea & Co ${label}`);
        await page.getByLabel('Support email').fill('help@tea.example');
        await page.getByLabel('No brand colour: use the default').setChecked(false);
        await page.getByLabel('Brand colour', { exact: true }).fill('#0b6b3a');
        await page.getByLabel('Logo URL').fill(LOGO);
        await page.getByRole('button', { name: 'Save settings' }).click();
        await page.getByText('Settings saved.').waitFor();
        // The preview: the logo loaded (its origin allowed on this page), the sample button in the brand colour.
        await page.waitForFunction("document.querySelector('[data-logo]')?.complete === true");
        expect(await page.evaluate<number>("document.querySelector('[data-logo]').naturalWidth")).toBeGreaterThan(0);
        expect(await page.locator('svg.brand-sample rect').getAttribute('fill')).toBe('#0b6b3a');
        expect(await page.locator('svg.brand-sample text').getAttribute('fill')).toBe('#ffffff');
        if (viewport === PHONE) await noWiderThanPhone(page);
        await page.screenshot({ path: `${SHOTS}/settings-saved-${label}.png`, fullPage: true });
        expect((await t.request('GET', '/v1/account', { key: testKey })).body).toMatchObject({
          business_name: `Tea & Co ${label}`, support_email: 'help@tea.example', brand_color: '#0b6b3a', logo_url: LOGO,
        });

        // A bad logo address is named beside its field.
        await page.getByLabel('Logo URL').fill('http://cdn.tea.example/logo.png');
        await page.getByRole('button', { name: 'Save settings' }).click();
        await page.locator('#logo_url-error').waitFor();
        expect(await page.locator('#logo_url-error').innerText()).toContain('must be an https URL');
        expect(await page.getByLabel('Logo URL').getAttribute('aria-invalid')).toBe('true');

        // The payer's side: a hosted checkout page with the name, the logo and the button colour.
        const cs = await createSession(t, testKey, teaRoomOrder('https://merchant.example'));
        await page.goto(cs.url);
        await page.waitForFunction("document.querySelector('.brand img')?.complete === true");
        expect(await page.locator('.brand-name').innerText()).toBe(`Tea & Co ${label}`);
        expect(await page.evaluate<number>("document.querySelector('.brand img').naturalWidth")).toBeGreaterThan(0);
        const style = "(e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color])(document.querySelector('button[type=submit]'))";
        expect(await page.evaluate<string[]>(style)).toEqual(['rgb(11, 107, 58)', 'rgb(255, 255, 255)']);
        if (viewport === PHONE) await noWiderThanPhone(page);
        await page.screenshot({ path: `${SHOTS}/settings-checkout-${label}.png`, fullPage: true });
        expect(violations).toEqual([]);
      });
    });
  }
});
