import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, cspViolations, PASSWORD, SHOTS } from './client.ts';
import { createSession } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer();
let browser: Browser;
let accountId: string;

beforeAll(async () => {
  const acct = await t.account();
  accountId = acct.accountId;
  await t.sql`update accounts set business_name = 'The Tea Room' where id = ${accountId}`;
  await createUser(t, accountId, 'owner@tearoom.example');
  // Payments made by payers on the hosted checkout: 49.00 + 12.50 usd succeeded, one declined.
  for (const [amount, card] of [
    [4900, CARDS.visa],
    [1250, CARDS.visa],
    [3000, CARDS.declined],
  ] as const) {
    const cs = await createSession(t, acct.test, { amount });
    await new Payer(t).pay(cs.id, { card_number: card });
  }
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});


/** The id of the element that has the keyboard focus. */
const focusedId = (page: Page) => page.locator(':focus').getAttribute('id');

async function signInWithKeyboard(page: Page) {
  await page.goto(`${t.url}/dashboard`);
  expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
  // The email field has the focus on arrival; Tab moves to the password; Enter submits.
  expect(await focusedId(page)).toBe('email');
  await page.keyboard.type('owner@tearoom.example');
  await page.keyboard.press('Tab');
  expect(await focusedId(page)).toBe('password');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(`${t.url}/dashboard`);
}

const statText = (page: Page, name: string) => page.locator(`[data-stat="${name}"]`).innerText();

describe('the dashboard in Chromium', () => {
  it('signs in with the keyboard only, shows the test banner and the Home numbers of the payments made, switches to live and back', async () => {
    await withPage(browser, DESKTOP, async (page) => {
      const violations = cspViolations(page);
      await page.goto(`${t.url}/dashboard/sign-in`);
      await page.screenshot({ path: `${SHOTS}/dash-sign-in-desktop.png`, fullPage: true });
      await signInWithKeyboard(page);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Home');
      expect(await page.getByText('TEST MODE').count()).toBe(1);
      expect(await page.getByText('The Tea Room').count()).toBe(1);
      expect(await statText(page, 'today')).toContain('$61.50');
      expect(await statText(page, 'last30')).toContain('$61.50');
      expect(await statText(page, 'succeeded')).toContain('2');
      expect(await statText(page, 'failed')).toContain('1');
      expect(await page.getByRole('img', { name: /Daily gross volume in USD over the last 30 days, \$61\.50 in all/ }).count()).toBe(1);
      // The navigation lists only pages that exist, and each answers.
      const links = await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      expect(links).toEqual([
        '/dashboard',
        '/dashboard/payments',
        '/dashboard/checkout-sessions',
        '/dashboard/payment-links',
        '/dashboard/customers',
        '/dashboard/invoices',
        '/dashboard/reports',
        '/dashboard/exports',
        '/dashboard/fraud',
        '/dashboard/events',
        '/dashboard/webhooks',
        '/dashboard/api-keys',
        '/dashboard/settings',
        '/dashboard/security',
        '/dashboard/team',
        '/dashboard/audit-log',
      ]);
      await page.screenshot({ path: `${SHOTS}/dash-home-desktop.png`, fullPage: true });

      await page.getByRole('button', { name: 'Switch to live data' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      expect(await page.getByText('TEST MODE').count()).toBe(0);
      expect(await page.locator('[data-mode]').innerText()).toBe('Live data');
      expect(await statText(page, 'last30')).not.toContain('$61.50');
      expect(await page.getByText('No succeeded payments in the last 30 days.').count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/dash-home-live-desktop.png`, fullPage: true });

      await page.getByRole('button', { name: 'Switch to test data' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      expect(await page.getByText('TEST MODE').count()).toBe(1);
      expect(await statText(page, 'last30')).toContain('$61.50');

      await page.getByRole('link', { name: 'Team' }).click();
      await page.getByLabel('Email').fill('partner@tearoom.example');
      await page.getByLabel('Role', { exact: true }).selectOption('administrator');
      await page.getByRole('button', { name: 'Send the invitation' }).click();
      await page.waitForURL(/done=invited/);
      // The inviter never sees the link (issue 25): it is read from the email, as the invitee would.
      expect(await page.content()).not.toContain('set-password?token=');
      const [mail] = await t.sql<{ text_body: string }[]>`select text_body from emails where template = 'invitation' and to_address = 'partner@tearoom.example'`;
      const link = /(http\S+\/dashboard\/set-password\?token=[A-Za-z0-9_-]{43})/.exec(mail!.text_body)![1]!;
      await page.screenshot({ path: `${SHOTS}/dash-team-desktop.png`, fullPage: true });

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${t.url}/dashboard/sign-in?signed_out=1`);
      await page.goto(`${t.url}/dashboard`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');

      // The invited partner chooses a password through the link, then signs in.
      await page.goto(link);
      await page.getByLabel('New password').fill('partner password 1');
      await page.getByLabel('Repeat the password').fill('partner password 1');
      await page.screenshot({ path: `${SHOTS}/dash-set-password-desktop.png`, fullPage: true });
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.waitForURL(`${t.url}/dashboard/sign-in?password_set=1`);
      await page.getByLabel('Email').fill('partner@tearoom.example');
      await page.getByLabel('Password').fill('partner password 1');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      expect(await statText(page, 'last30')).toContain('$61.50');
      expect(violations).toEqual([]);
    });
  });

  it('is readable on a phone: nothing wider than the screen', async () => {
    await withPage(browser, PHONE, async (page) => {
      const violations = cspViolations(page);
      await page.goto(`${t.url}/dashboard/sign-in`);
      await page.screenshot({ path: `${SHOTS}/dash-sign-in-phone.png`, fullPage: true });
      await signInWithKeyboard(page);
      expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      expect(await page.getByText('TEST MODE').count()).toBe(1);
      await page.screenshot({ path: `${SHOTS}/dash-home-phone.png`, fullPage: true });
      await page.getByRole('link', { name: 'Team' }).click();
      await page.screenshot({ path: `${SHOTS}/dash-team-phone.png`, fullPage: true });
      expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.screenshot({ path: `${SHOTS}/dash-audit-log-phone.png`, fullPage: true });
      expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      expect(await page.getByText('user.signed_in').count()).toBeGreaterThan(0);
      expect(violations).toEqual([]);
    });
  });
});
