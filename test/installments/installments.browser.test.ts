import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCardUpdate } from '../../src/installments/service.ts';
import { fitsWidth, launchBrowser, withWatchedPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createInstallmentLink, paymentsOfPlan } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

// The payer's side in Chromium, on the running service (every worker) with test plans 2 seconds
// apart and retries 5 seconds apart: a plan chosen on a link page and one on the hosted invoice
// page, paid to completion; the invoice's plan on a card whose later charges fail, the dunning
// email received over SMTP, the card replaced on the card-update page, the plan then completed.
// Screenshots (desktop, and a 390 px phone) go to /tmp/shots/installments-*.png.

const SHOTS = '/tmp/shots';
const smtp = useSmtp();
const t = useTestServer(() => ({
  workers: true,
  env: { SMTP_URL: smtp.url, INSTALLMENT_TEST_INTERVAL_SECONDS: '2', INSTALLMENT_TEST_RETRY_SECONDS: '5', RECONCILE_INTERVAL_MS: '1000' },
}));
let key: string;
let accountId: string;
let browser: Browser;
beforeAll(async () => {
  ({ test: key, accountId } = await t.account());
  await t.request('POST', '/v1/account', { key: await t.key(accountId, 'live'), body: { business_name: 'Riverside Pottery' } });
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const withPage = <T>(width: number, work: (page: Page, problems: string[]) => Promise<T>) => withWatchedPage(browser, width, work);
const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/installments-${name}.png`, fullPage: true });

async function fillCard(page: Page, card: string, name = 'Ada Lovelace') {
  await page.getByLabel('Name on card').fill(name);
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry').fill('12/34');
  await page.getByLabel('CVC').fill('123');
}

const planOfSession = async (sessionId: string) => (await t.sql`select * from installment_plans where checkout_session_id = ${sessionId}`)[0];

describe('installment plans in Chromium', () => {
  it('when a payer on a phone chooses a plan on the link page, then the page asks for the email and the agreement, the checkout says Payment 1 of 3, and the plan is paid to completion', async () => {
    const link = await createInstallmentLink(t, key, { description: 'Wheel throwing, 6 evenings', amount: 18000, currency: 'eur', installment_options: [{ count: 3, interval: 'month' }, { count: 6, interval: 'week' }] });
    let sessionId = '';
    await withPage(390, async (page, problems) => {
      await page.goto(link.url);
      await page.getByRole('radio', { name: /Pay in full/ }).waitFor();
      expect(await page.getByRole('radio', { name: /Pay in full/ }).isChecked()).toBe(true);
      // Every amount and date of each plan is on the page, with its authorisation.
      const plan3 = page.getByRole('radio', { name: /3 monthly payments/ });
      expect(await page.locator('#plan-3-month-schedule li').count()).toBe(3);
      expect(await page.locator('#plan-6-week-schedule li').count()).toBe(6);
      expect(await page.locator('#plan-3-month-terms').textContent()).toContain('I authorise Riverside Pottery to charge my card €60.00 today');
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, 'link-phone');

      // A plan without the tick and without an email: both named.
      await plan3.check();
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.getByText('Please check the highlighted fields.').waitFor();
      expect(await page.getByRole('radio', { name: /3 monthly payments/ }).isChecked()).toBe(true);
      await page.getByText('Tick the box to agree').waitFor();
      await page.getByText('a payment plan needs it').waitFor();
      await shot(page, 'link-errors-phone');

      await page.getByLabel('Email (for a payment plan)').fill('ada@example.com');
      await page.getByRole('checkbox', { name: /I agree to its authorisation/ }).check();
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/checkout\/cs_/);
      sessionId = /\/checkout\/(cs_[0-9a-z]+)/.exec(page.url())![1]!;
      await page.getByText('Payment 1 of 3').waitFor();
      expect(await page.getByRole('list', { name: 'Payment plan' }).locator('li').count()).toBe(3);
      expect(await page.getByLabel('Email').inputValue()).toBe('ada@example.com');
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, 'checkout-phone');
      await fillCard(page, CARDS.visa);
      await page.getByRole('button', { name: 'Pay €60.00' }).click();
      await page.waitForURL(/\/paid\?session=cs_/);
      await page.getByText('Payment successful').waitFor();
      await shot(page, 'link-paid-phone');
      expect(problems).toEqual([]);
    });
    const plan = await planOfSession(sessionId);
    expect(plan).toMatchObject({ status: 'ACTIVE', count: 3, total_cents: 18000, email: 'ada@example.com' });
    expect(plan!.agreement_text).toContain('I authorise Riverside Pottery to charge my card €60.00 today and €60.00 on each of');
    await eventually(async () => (await planOfSession(sessionId))!.status === 'COMPLETED', 20_000);
    expect((await paymentsOfPlan(t, plan!.id)).map((p) => p.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  }, 60_000);

  it('when an invoice is paid by a plan on a card whose later charges fail, then the dunning email arrives over SMTP, the card is replaced on the card-update page and the plan completes with invoice.paid once', async () => {
    const customer = (await t.request('POST', '/v1/customers', { key, body: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' } })).body;
    const created = await t.request('POST', '/v1/invoices', {
      key,
      body: { customer_id: customer.id, currency: 'usd', line_items: [{ name: 'Kiln firing, 12 pieces', quantity: 1, amount: 24000 }], allow_installments: true, installment_options: [{ count: 3, interval: 'month' }] },
    });
    const inv = (await t.request('POST', `/v1/invoices/${created.body.id}/send`, { key })).body;
    let sessionId = '';
    await withPage(1280, async (page, problems) => {
      await page.goto(inv.hosted_invoice_url);
      await page.getByRole('radio', { name: /3 monthly payments/ }).check();
      await page.getByRole('checkbox', { name: /I agree to its authorisation/ }).check();
      await shot(page, 'invoice-desktop');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/checkout\/cs_/);
      sessionId = /\/checkout\/(cs_[0-9a-z]+)/.exec(page.url())![1]!;
      await page.getByText('Payment 1 of 3').waitFor();
      await shot(page, 'invoice-checkout-desktop');
      await fillCard(page, CARDS.laterDeclines, 'Grace Hopper');
      await page.getByRole('button', { name: 'Pay $80.00' }).click();
      await page.waitForURL(/\/invoices\/[A-Za-z0-9_-]+\?paid=cs_/);
      await page.getByText('being paid in 3 installments').waitFor();
      expect(await page.locator('form[action$="/pay"]').count()).toBe(0);
      await shot(page, 'invoice-plan-desktop');
      expect(problems).toEqual([]);
    });
    const plan = (await planOfSession(sessionId))!;
    // Part 2 is declined 2 s later: the customer is emailed a link to replace the card.
    const notice = await smtp.waitFor((m) => m.to.includes('grace@example.com') && m.subject.startsWith('Payment 2 of 3'), 15_000);
    expect(notice.text).toContain('/portal/');
    expect(notice.text).toContain('token=');
    const { url } = await startCardUpdate(t.s, { accountId, livemode: false }, plan.id, inv.hosted_invoice_url);
    await withPage(390, async (page, problems) => {
      await page.goto(url);
      await page.getByRole('heading', { name: 'Save a new card' }).waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await shot(page, 'card-update-phone');
      await fillCard(page, CARDS.threeDS, 'Grace Hopper');
      await page.getByRole('button', { name: 'Save card' }).click();
      await page.getByRole('heading', { name: 'Confirm your card' }).waitFor();
      await page.getByRole('button', { name: 'Complete authentication' }).click();
      await page.getByRole('heading', { name: 'Your card is saved' }).waitFor();
      await shot(page, 'card-saved-phone');
      await page.getByRole('link', { name: 'Continue' }).click();
      await page.waitForURL(inv.hosted_invoice_url);
      expect(problems).toEqual([]);
    });
    await eventually(async () => (await planOfSession(sessionId))!.status === 'COMPLETED', 30_000);
    const invoice = (await t.request('GET', `/v1/invoices/${inv.id}`, { key })).body;
    expect(invoice).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
    expect((await t.sql`select count(*)::int as n from events where type = 'invoice.paid' and data->'object'->>'id' = ${inv.id}`)[0]!.n).toBe(1);
    const payments = await paymentsOfPlan(t, plan.id);
    // Parts 2 and 3 both came due on the failing card (a second apart): after the new card, their retries run in any order.
    expect(payments.filter((p) => p.status === 'SUCCEEDED').map((p) => p.installment_number).sort()).toEqual([1, 2, 3]);
    expect(payments.filter((p) => p.status === 'SUCCEEDED').slice(1).every((p) => p.card_last4 === '3220')).toBe(true);
    await withPage(390, async (page) => {
      await page.goto(inv.hosted_invoice_url);
      await page.getByText('This invoice is paid').waitFor();
      await shot(page, 'invoice-paid-phone');
    });
  }, 90_000);
});
