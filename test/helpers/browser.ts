import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { alive } from '../../src/ops/pidfiles.ts';
import { eventually } from './wait.ts';

/**
 * Debian's Chromium headless shell (`apt-get install chromium-headless-shell`) where it is installed,
 * else its Chromium (`apt-get install chromium`); CHROMIUM_PATH points elsewhere. The headless shell
 * is Chromium without the browser's own UI process work: the same pages, tests and screenshots took
 * two thirds of the time (six browser files, 49 to 51 s against 75 to 77 s, alternating runs).
 */
export const CHROMIUM_PATH =
  process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((p) => existsSync(p)) ?? '/usr/bin/chromium';

export const ARTIFACTS_DIR = new URL('../artifacts/', import.meta.url).pathname;

/** The flags a container needs. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * A headless Chromium driven by playwright-core: the browser project's shared one (test/browser-setup.ts;
 * `close()` then only disconnects), or one launched for this file when run outside that project.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  const shared = inject('browserWsEndpoint');
  if (shared) return chromium.connect(shared);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
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

/** Fills the hosted checkout's card form at `base` for `sessionId` with `card` and presses Pay. */
export async function payOnHostedPage(page: Page, base: string, sessionId: string, card: string): Promise<void> {
  await page.goto(`${base}/checkout/${sessionId}`);
  await page.getByLabel('Email').fill('payer@example.com');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry').fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: /^Pay/ }).click();
}

const CLIPBOARD_LOCK = join(tmpdir(), 'payments-tests-clipboard.lock');

/**
 * Runs `work` (a Copy button pressed, then the clipboard read) holding the clipboard alone. The
 * browser project's files share one Chromium, whose clipboard is one for all its contexts: two
 * files copying at once read each other's text (seen: a webhook secret test read a link's URL).
 * The lock is a directory holding the owner's pid; one whose owner is gone is taken over.
 */
export async function withClipboard<T>(work: () => Promise<T>): Promise<T> {
  await eventually(async () => {
    try {
      await mkdir(CLIPBOARD_LOCK);
    } catch {
      const owner = Number(await readFile(join(CLIPBOARD_LOCK, 'pid'), 'utf8').catch(() => 'NaN'));
      if (Number.isInteger(owner) && owner > 0 && !alive(owner)) await rm(CLIPBOARD_LOCK, { recursive: true, force: true });
      return false;
    }
    await writeFile(join(CLIPBOARD_LOCK, 'pid'), String(process.pid));
    return true;
  }, 60_000);
  try {
    return await work();
  } finally {
    await rm(CLIPBOARD_LOCK, { recursive: true, force: true });
  }
}
