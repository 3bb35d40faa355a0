import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { fitsWidth, launchBrowser, withWatchedPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { createCustomer, createSession, paidPayment, sentInvoice } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

/** Where the screenshots for people go (listed in the report). */
const SHOTS = '/tmp/shots';

const smtp = useSmtp();
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});
const t = useTestServer(() => ({ workers: true, env: { SMTP_URL: smtp.url } }));

const withPage = <T>(width: number, work: (page: Page, problems: string[]) => Promise<T>) => withWatchedPage(browser, width, work);

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/portal-${name}.png`, fullPage: true });

let accountId: string;
let key: string;
let customerId: string;
beforeAll(async () => {
  const a = await t.account();
  accountId = a.accountId;
  key = a.test;
  await t.request('PATCH', '/v1/account', { key: a.live, body: { business_name: 'Harbour Tea Rooms', brand_color: '#0a7c55', support_email: 'help@harbour.example' } });
  const cus = await createCustomer(t, key, { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });
  customerId = cus.id;
  await paidPayment(t, key, { customer_id: customerId, amount: 2450, description: 'Loose-leaf sampler box' });
  await paidPayment(t, key, { customer_id: customerId, amount: 8900, description: 'Cast-iron teapot, 1.2 l' });
  await sentInvoice(t, key, {
    customer_id: customerId,
    description: 'Private tasting, Saturday 14 June',
    due_date: Math.floor(Date.now() / 1000) + 14 * 86400,
    line_items: [
      { name: 'Tasting for six', quantity: 1, amount: 18_000 },
      { name: 'Scones, extra tray', quantity: 2, amount: 1_500 },
    ],
  });
  // An installment plan of the customer, as the installments component records one (1 of 3 paid).
  const cs = await createSession(t, key, { amount: 4000, customer_id: customerId });
  const plan = newId('ip');
  await t.sql`
    insert into installment_plans (id, account_id, livemode, customer_id, payment_link_id, checkout_session_id, currency, total_cents, count,
      interval, email, description, processor_payment_method, card_brand, card_last4, agreement_text, agreed_at)
    values (${plan}, ${accountId}, false, ${customerId}, 'pl_portal_browser', ${cs.id}, 'usd', 12000, 3, 'month', 'ada@example.com',
      'Tea club, three months', 'pm_sim_x', 'visa', '4242', 'I agree to pay in 3 parts.', now())`;
  await t.sql`
    insert into installments (plan_id, number, amount_cents, due_at, status, next_attempt_at, paid_at)
    values (${plan}, 1, 4000, now(), 'PAID', null, now()),
           (${plan}, 2, 4000, now() + interval '1 month', 'SCHEDULED', now() + interval '1 month', null),
           (${plan}, 3, 4000, now() + interval '2 months', 'SCHEDULED', now() + interval '2 months', null)`;
});

/** On the hosted checkout: the card form, 4242, Pay. */
async function payOnCheckout(page: Page) {
  await page.waitForURL(/\/checkout\/cs_/);
  await page.getByLabel('Name on card').fill('Ada Lovelace');
  await page.getByLabel('Card number').fill(CARDS.visa);
  await page.getByLabel('Expiry').fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: /^Pay/ }).click();
  await page.waitForURL(/\/invoices\/[A-Za-z0-9_-]+\?paid=cs_/);
}

describe('the customer portal in Chromium', () => {
  it('when a customer asks for a link with the keyboard, signs in by the emailed link, sees payments, a plan and an invoice, replaces the plan\'s card (3-D Secure) and pays the invoice on its hosted page, then the portal shows both; the screenshots are saved', async () => {
    const portal = `${t.url}/portal/${accountId}`;
    for (const width of [1280, 390]) {
      await withPage(width, async (page, problems) => {
        await page.goto(`${portal}?mode=test`);
        await page.getByRole('heading', { name: 'Sign in to your account' }).waitFor();
        await page.getByText('Harbour Tea Rooms').first().waitFor();
        await shot(page, `sign-in-${width < 500 ? 'phone' : 'desktop'}`);
        expect(await fitsWidth(page)).toBe(true);
        expect(problems).toEqual([]);
      });
    }

    let link = '';
    await withPage(390, async (page, problems) => {
      await page.goto(`${portal}?mode=test`);
      // Keyboard only: Tab to the email field, type, Enter.
      const focused = async () => (await page.locator('#email:focus').count()) === 1;
      for (let i = 0; i < 10 && !(await focused()); i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe(true);
      await page.keyboard.type('ada@example.com');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Check your email' }).waitFor();
      await page.getByText('If ada@example.com is known to Harbour Tea Rooms, a sign-in link is on its way to it.').waitFor();
      await shot(page, 'link-sent-phone');
      expect(problems).toEqual([]);

      const mail = await smtp.waitFor((m) => m.to.includes('ada@example.com') && m.subject.includes('Sign in'));
      link = /http:\/\/\S+\/sign-in\?token=[A-Za-z0-9_-]{43}/.exec(mail.text)![0];
      // The email as a mail client shows it (its HTML part), for people to look at.
      const inbox = await page.context().newPage();
      await inbox.setContent(mail.html);
      await shot(inbox, 'email-phone');
      await inbox.close();

      await page.goto(link);
      await page.waitForURL(portal);
      await page.getByRole('heading', { name: 'Hello, Ada' }).waitFor();
      await page.getByText('Loose-leaf sampler box').waitFor();
      await page.getByText('Cast-iron teapot, 1.2 l').waitFor();
      await page.getByText('Tea club, three months').waitFor();
      expect(await page.getByRole('heading', { name: 'Invoices to pay' }).count()).toBe(1);
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, 'overview-phone');
      await page.getByRole('link', { name: 'Tea club, three months' }).click();
      await page.getByRole('table', { name: 'Schedule' }).waitFor();
      await page.getByRole('button', { name: 'Replace the card' }).waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, 'plan-phone');

      // Replace the card: the hosted checkout's card form, 3-D Secure, and back to the plan.
      await page.getByRole('button', { name: 'Replace the card' }).click();
      await page.getByRole('heading', { name: 'Save a new card' }).waitFor();
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByLabel('Card number').fill(CARDS.threeDS);
      await page.getByLabel('Expiry').fill('12/34');
      await page.getByLabel('CVC').fill('123');
      await page.getByRole('button', { name: 'Save card' }).click();
      await page.getByRole('button', { name: 'Complete authentication' }).click();
      await page.getByRole('link', { name: 'Continue' }).click();
      await page.getByText('Your new card is saved: Visa •••• 3220. The next payments are taken from it.').waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, 'card-replaced-phone');
      await page.getByRole('link', { name: 'Payments' }).click();
      await page.getByRole('link', { name: 'Cast-iron teapot, 1.2 l' }).click();
      await page.getByRole('link', { name: 'View receipt' }).waitFor();
      await shot(page, 'payment-phone');
      expect(problems).toEqual([]);
    });

    // The emailed link works once: a second click (another browser) says so, with the form.
    await withPage(1280, async (page, problems) => {
      await page.goto(link);
      await page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
      await page.getByLabel('Email').waitFor();
      await shot(page, 'link-gone-desktop');
      expect(problems).toEqual([]);
    });

    await withPage(1280, async (page, problems) => {
      const mailsBefore = smtp.received.length;
      await page.goto(`${portal}?mode=test`);
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await page.getByRole('heading', { name: 'Check your email' }).waitFor();
      const mail = await smtp.waitFor((m) => smtp.received.indexOf(m) >= mailsBefore && m.to.includes('ada@example.com'));
      await page.goto(/http:\/\/\S+\/sign-in\?token=[A-Za-z0-9_-]{43}/.exec(mail.text)![0]);
      await page.getByRole('heading', { name: 'Hello, Ada' }).waitFor();
      await shot(page, 'overview-desktop');

      // Pay the open invoice: the portal's Pay leads to the hosted invoice page, its Pay to the checkout.
      await page.getByRole('link', { name: /^Pay Invoice INV-/ }).click();
      await page.waitForURL(/\/invoices\/[A-Za-z0-9_-]+$/);
      await page.getByRole('button', { name: 'Pay $210.00' }).click();
      await payOnCheckout(page);
      await page.getByText('This invoice is now paid in full.').waitFor();

      await page.goto(portal);
      expect(await page.getByRole('heading', { name: 'Invoices to pay' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Invoices', exact: true }).click();
      await page.getByText('Paid').first().waitFor();
      await page.getByRole('link', { name: /^Invoice INV-/ }).first().click();
      await page.getByRole('link', { name: 'Download PDF' }).waitFor();
      expect(await page.getByRole('link', { name: /^Pay \$/ }).count()).toBe(0);
      await shot(page, 'invoice-paid-desktop');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You are signed out.').waitFor();
      expect(problems).toEqual([]);
    });
  }, 60_000);
});
