import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../src/openapi/routes.ts';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
const SHOTS = '/tmp/shots';
/**
 * Redoc renders the whole API document in the page, then the test walks it: 20 to 30 s on a loaded
 * 2-core machine (a full run timed out at the default 30 s once, with nothing wrong on the page).
 * What is checked is what the page shows, not how fast it renders.
 */
const RENDER_MS = 40_000;
const TEST_MS = 90_000;

/** What the page did: console problems, CSP violations, requests to other origins. */
function watch(page: Page, origin: string) {
  const seen = { problems: [] as string[], elsewhere: [] as string[], requests: [] as string[] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') seen.problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    const url = r.url();
    seen.requests.push(url);
    if (!url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:')) seen.elsewhere.push(url);
  });
  return seen;
}

describe('GET /docs: the API reference in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
    await mkdir(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('when the page is fetched, then it is HTML with a strict CSP and the bundle is versioned and cached for a year', async () => {
    const res = await fetch(`${t.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toBe(DOCS_CSP);
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    const html = await res.text();
    const src = /<script src="(\/docs\/redoc\.standalone\.js\?v=[0-9a-f]{16})">/.exec(html)?.[1];
    expect(src).toBeTruthy();
    const bundle = await fetch(`${t.url}${src}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const code = await bundle.text();
    expect(code).not.toContain('cdn.redoc.ly/redoc/logo');
    expect(code).not.toContain('fonts.googleapis.com');
  });

  it('when opened on a desktop, then it shows the operations and the webhooks, with no CSP violation and no request elsewhere', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const seen = watch(page, t.url);
      await page.goto(`${t.url}/docs`);
      await page.getByRole('heading', { name: 'Create a customer' }).first().waitFor({ timeout: RENDER_MS });
      expect(await page.getByText('/v1/customers').first().isVisible()).toBe(true);
      await page.screenshot({ path: `${SHOTS}/docs-desktop.png` });
      // The webhooks: one section per event type, its payload and headers.
      for (const type of ['checkout.session.completed', 'payment.succeeded', 'invoice.paid', 'dispute.closed']) {
        await page.getByRole('heading', { name: type }).first().waitFor({ state: 'attached', timeout: 5000 });
      }
      const webhook = page.getByRole('heading', { name: 'payment.succeeded' }).first();
      await webhook.scrollIntoViewIfNeeded();
      expect(await webhook.isVisible()).toBe(true);
      await page.screenshot({ path: `${SHOTS}/docs-desktop-webhook.png` });
      // An operation's details: its request body and its answer.
      await page.getByRole('heading', { name: 'Create a customer' }).first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/docs-desktop-operation.png` });
      // Search, which runs in a worker made from a blob: URL.
      await page.getByPlaceholder('Search...').fill('refund');
      await page.getByRole('menuitem', { name: /Create a refund/ }).first().waitFor({ timeout: 5000 });
      await page.screenshot({ path: `${SHOTS}/docs-desktop-search.png` });
      expect(seen.problems).toEqual([]);
      expect(seen.elsewhere).toEqual([]);
      expect(seen.requests.some((u) => u.endsWith('/v1/openapi.json'))).toBe(true);
    });
  }, TEST_MS);

  it('when opened on a 390 px phone, then it is readable: no sideways scrolling, the menu behind a button', async () => {
    await withPage(browser, PHONE, async (page) => {
      const seen = watch(page, t.url);
      await page.goto(`${t.url}/docs`);
      await page.getByRole('heading', { name: 'Create a customer' }).first().waitFor({ timeout: RENDER_MS });
      const width = await page.locator('html').evaluate((el) => el.scrollWidth);
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: `${SHOTS}/docs-phone.png` });
      await page.getByRole('heading', { name: 'Create a customer' }).first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/docs-phone-operation.png` });
      expect(seen.problems).toEqual([]);
      expect(seen.elsewhere).toEqual([]);
    });
  }, TEST_MS);
});
