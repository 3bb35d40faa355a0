import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkCountersWorker } from '../../workers/link-counters.ts';
import { DESKTOP, launchBrowser, PHONE, screenshot, withPage as withViewport } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { createLink } from './helpers.ts';
import { eventually } from '../helpers/wait.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const t = useTestServer({ workers: [linkCountersWorker] });
let key: string;
let browser: Browser;
beforeAll(async () => {
  key = (await t.account()).test;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const withPage = <T>(width: number, work: (page: Page) => Promise<T>) => withViewport(browser, width < 500 ? PHONE : DESKTOP, work);
const shot = (page: Page, name: string) => screenshot(page, name.replace(/\.png$/, ''));

describe('payment link pages in Chromium', () => {
  it('when a payer fills the link form and pays on the hosted checkout, then the thanks page shows and the payment records its source', async () => {
    const link = await createLink(t, key, {
      name: 'Yoga class, 10 sessions',
      description: 'Wednesdays 7pm at the studio. Bring a mat.',
      amount: 12000,
      currency: 'eur',
      collect_name: true,
      collect_email: true,
      collect_phone: true,
      installment_enabled: true,
    });
    await withPage(1280, async (page) => {
      await page.goto(`${link.url}?src=WHATSAPP`);
      // The link's name is internal (issue 14): the heading is the description.
      expect(await page.locator('h1').textContent()).toBe('Wednesdays 7pm at the studio. Bring a mat.');
      expect(await page.content()).not.toContain('Yoga class');
      await page.getByText('€120.00').first().waitFor();
      await page.getByRole('radio', { name: /Pay in full/ }).waitFor();
      expect(await page.getByRole('radio', { name: /Pay in full/ }).isChecked()).toBe(true);
      await shot(page, 'payment-link-desktop.png');
      await page.getByLabel('Name').fill('Ada Lovelace');
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Phone').fill('+44 20 7946 0000');
      await page.getByRole('button', { name: 'Continue to payment' }).click();

      await page.waitForURL(/\/checkout\/cs_/);
      expect(await page.getByLabel('Email').inputValue()).toBe('ada@example.com');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByLabel('Card number').fill(CARDS.visa);
      await page.getByLabel('Expiry').fill('12/34');
      await page.getByLabel('CVC').fill('123');
      await page.getByRole('button', { name: /Pay/ }).click();

      await page.waitForURL(/\/paid\?session=cs_/);
      await page.getByText('Payment successful').waitFor();
      await shot(page, 'payment-link-paid-desktop.png');
    });
    const [payment] = await t.sql`select link_source, amount_cents, currency from payments where payment_link_id = ${link.id} and status = 'SUCCEEDED'`;
    expect(payment).toEqual({ link_source: 'WHATSAPP', amount_cents: 12000, currency: 'eur' });
    await eventually(async () => (await t.sql`select payment_count from payment_links where id = ${link.id}`)[0]!.payment_count === 1);

    await withPage(390, async (page) => {
      await page.goto(link.url);
      await shot(page, 'payment-link-phone.png');
      await page.getByLabel('Email').fill('not an email');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.getByText('Please check the highlighted fields.').waitFor();
      expect(await page.locator('[aria-invalid=true]').count()).toBe(3);
      expect(await page.getByLabel('Email').inputValue()).toBe('not an email');
      await shot(page, 'payment-link-errors-phone.png');
    });
  });

  it.each([
    ['has ended', 'This payment link has ended'],
    ['was cancelled', 'deactivated by the merchant'],
    ['has expired', 'This payment link has expired'],
  ])('when the link %s, then the page says so and offers no form', async (state, message) => {
    const link = await createLink(t, key, { type: 'SINGLE', name: 'Signed poster', description: 'One of a kind.' });
    if (state === 'has ended') {
      await withPage(1280, async (page) => {
        await page.goto(link.url);
        await page.getByRole('button', { name: 'Continue to payment' }).click();
        await page.waitForURL(/\/checkout\/cs_/);
        await page.getByLabel('Email').fill('buyer@example.com');
        await page.getByLabel('Name on card').fill('First Buyer');
        await page.getByLabel('Card number').fill(DIGITS.visa);
        await page.getByLabel('Expiry').fill('12/34');
        await page.getByLabel('CVC').fill('123');
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(/\/paid\?session=cs_/);
      });
    } else if (state === 'was cancelled') {
      await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { status: 'CANCELLED' } });
    } else {
      await t.sql`update payment_links set expires_at = now() - interval '1 second' where id = ${link.id}`;
    }
    for (const width of [1280, 390]) {
      await withPage(width, async (page) => {
        await page.goto(link.url);
        await page.getByText(message).waitFor();
        expect(await page.locator('form').count()).toBe(0);
        expect(await page.locator('input').count()).toBe(0);
        if (state === 'has ended') await shot(page, `payment-link-ended-${width < 500 ? 'phone' : 'desktop'}.png`);
      });
    }
  });
});
