import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const ARTIFACTS_DIR = new URL('../artifacts/', import.meta.url).pathname;

/** A headless Chromium driven by playwright-core, with the flags a container needs. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export const DESKTOP = { width: 1280, height: 800 };
/** An iPhone-sized viewport: 390 CSS pixels wide. */
export const PHONE = { width: 390, height: 844 };

/** Runs `work` in a fresh context (own cookies) with the given viewport, then closes it. */
export async function withPage<T>(
  browser: Browser,
  viewport: { width: number; height: number },
  work: (page: Page, context: BrowserContext) => Promise<T>,
): Promise<T> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, isMobile: viewport.width < 500, hasTouch: viewport.width < 500 });
  try {
    return await work(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

/** A full-page screenshot into test/artifacts/ (gitignored), for people to look at. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const path = `${ARTIFACTS_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * withPage at a phone's (width under 500) or a desktop's size, recording what the browser refused
 * (a CSP violation) and script errors in `problems`. A page answered with an error status (a 400
 * form, a 410 spent link, the 404 of /favicon.ico) is no problem.
 */
export function withWatchedPage<T>(browser: Browser, width: number, work: (page: Page, problems: string[]) => Promise<T>): Promise<T> {
  return withPage(browser, width < 500 ? PHONE : DESKTOP, async (page) => {
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    return work(page, problems);
  });
}

/** Nothing wider than the viewport: no sideways scrolling on a phone. */
export const fitsWidth = async (page: Page): Promise<boolean> => (await page.locator('html').evaluate((el) => el.scrollWidth)) <= page.viewportSize()!.width;
