import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession, teaRoomOrder } from '../helpers/factories.ts';

// A branded checkout page in Chromium: the logo loads from its https origin (served here by
// Playwright's request interception, as the sandbox has no network), the Pay button wears the brand
// colour with contrasting text, and the browser reports no Content-Security-Policy violation.

const SHOTS = '/work/shots';
const LOGO = 'https://cdn.tea.example/brand/logo.svg';
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40"><rect width="120" height="40" rx="8" fill="#0b6b3a"/><text x="60" y="26" font-family="sans-serif" font-size="16" fill="#fff" text-anchor="middle">TEA&amp;CO</text></svg>`;

const t = useTestServer();
let key: string;
let browser: Browser;

beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  const res = await t.request('PATCH', '/v1/account', { key: a.live, body: { business_name: 'Tea & Co', brand_color: '#0b6b3a', logo_url: LOGO } });
  expect(res.status).toBe(200);
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

/** Opens `url` with the logo's origin answered locally; collects every CSP complaint of the browser. */
async function openBranded(page: Page, url: string): Promise<string[]> {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  await page.route('https://cdn.tea.example/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: SVG }));
  await page.goto(url);
  await page.locator('img[alt="Tea & Co"]').waitFor();
  await page.waitForFunction("document.querySelector('.brand img')?.complete === true");
  return violations;
}

describe('a branded checkout page in Chromium', () => {
  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    it(`when opened on a ${label} (${viewport.width} px), then name, logo and brand-coloured button show, with no CSP violation`, async () => {
      const cs = await createSession(t, key, teaRoomOrder('https://merchant.example'));
      await withPage(browser, viewport, async (page) => {
        const violations = await openBranded(page, cs.url);
        expect(await page.locator('.brand-name').textContent()).toBe('Tea & Co');
        // Strings run in the page (the project's TypeScript has no DOM types).
        expect(await page.evaluate<number>("document.querySelector('.brand img').naturalWidth")).toBeGreaterThan(0);
        const button = page.getByRole('button', { name: 'Pay $49.00' });
        await button.waitFor();
        const style = "(e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color])(document.querySelector('button[type=submit]'))";
        expect(await page.evaluate<string[]>(style)).toEqual(['rgb(11, 107, 58)', 'rgb(255, 255, 255)']);
        // The page's own stylesheet applied (a refused <style> would leave the body unstyled).
        expect(await page.evaluate<string>('getComputedStyle(document.body).backgroundColor')).toBe('rgb(243, 244, 247)');
        await page.screenshot({ path: `${SHOTS}/brand-checkout-${label}.png`, fullPage: true });
        expect(violations).toEqual([]);
      });
    });
  }
});
