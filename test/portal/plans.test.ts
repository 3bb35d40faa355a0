import { describe, expect, it } from 'vitest';
import { Payer, pathOf } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { pageText, PortalClient } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';
import { createInstallmentLink } from '../helpers/factories.ts';
import { startPlan } from '../helpers/plans.ts';

// Issue 16's check: an installment plan made by a payer on a link page, its customer signed in to
// the portal by the emailed magic link, the card replaced there (3-D Secure included); another
// customer of the same account cannot reach the plan or replace its card.
const smtp = useSmtp();
const t = useTestServer(() => ({ workers: true, env: { SMTP_URL: smtp.url } }));

/** Asks for a link on the portal page and follows the one emailed: a signed-in client. */
async function signInByEmail(accountId: string, email: string): Promise<PortalClient> {
  const before = smtp.received.length;
  const c = new PortalClient(t);
  expect((await c.askForLink(accountId, email, 'test')).status).toBe(200);
  const mail = await smtp.waitFor((m) => smtp.received.indexOf(m) >= before && m.to.includes(email) && m.subject.includes('Sign in'));
  expect((await c.follow(/http:\/\/\S+\/sign-in\?token=[A-Za-z0-9_-]{43}/.exec(mail.text)![0])).status).toBe(303);
  return c;
}

describe('a plan made on a link page, in its customer\'s portal', () => {
  it('when its customer signs in by the emailed link, then the plan and its first payment show; replacing the card (3-D Secure) makes the new card the plan\'s; another customer gets 404', async () => {
    const { accountId, test } = await t.account();
    const link = await createInstallmentLink(t, test, { amount: 9000, installment_options: [{ count: 3, interval: 'month' }] });
    const { plan } = await startPlan(t, link.url, undefined, { email: 'plan.payer@example.com', name: 'Pat Payer' });
    expect(plan).toBeTruthy();

    const c = await signInByEmail(accountId, 'plan.payer@example.com');
    const home = await c.get(`/portal/${accountId}`);
    expect(home.status).toBe(200);
    const text = pageText(home.html);
    expect(text).toContain('Installment plans');
    expect(text).toContain('1 of 3 paid');
    expect(home.html).toContain(`/portal/${accountId}/plans/${plan!.id}`);

    // The first part is among the customer's payments, named as the part it is.
    const [first] = await t.sql<{ id: string }[]>`select id from payments where installment_plan_id = ${plan!.id} and installment_number = 1`;
    const paymentsPage = await c.get(`/portal/${accountId}/payments`);
    expect(paymentsPage.html).toContain(`/portal/${accountId}/payments/${first!.id}`);
    expect(pageText(paymentsPage.html)).toMatch(/\(payment 1 of 3\)/);
    expect(pageText(paymentsPage.html)).not.toMatch(/\(payment 1 of 3\) \(payment/);

    const page = await c.get(`/portal/${accountId}/plans/${plan!.id}`);
    expect(pageText(page.html)).toContain('Paid so far $30.00 (1 of 3)');
    expect(pageText(page.html)).not.toMatch(/\d{1,2}:\d{2}:\d{2} [AP]M UTC/);
    // A test plan on the shortened calendar (seconds apart): its dates come with their time, as on the link page.
    await t.sql`update installment_plans set test_interval_seconds = 60 where id = ${plan!.id}`;
    const shortened = pageText((await c.get(`/portal/${accountId}/plans/${plan!.id}`)).html);
    expect(shortened).toMatch(/Next payment \$30\.00 on [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2} [AP]M UTC/);
    await t.sql`update installment_plans set test_interval_seconds = null where id = ${plan!.id}`;
    const opened = await c.post(`/portal/${accountId}/plans/${plan!.id}/card`);
    expect(opened.status).toBe(303);
    const checkout = pathOf(opened.location!);
    const payer = new Payer(t);
    await payer.get(checkout);
    const saved = await payer.post(`${checkout}/pay`, { email: 'plan.payer@example.com', name: 'Pat Payer', card_number: CARDS.threeDS, expiry: '12/34', cvc: '123' });
    const setup = /setup=(seti_[0-9a-z]+)/.exec(saved.location ?? '')?.[1];
    expect(setup, `${saved.status} ${saved.location}`).toBeTruthy();
    await payer.get(pathOf(saved.location!));
    expect((await payer.post(`${checkout}/authenticate`, { setup: setup!, outcome: 'complete' })).status).toBe(303);

    const [after] = await t.sql`select card_last4, processor_payment_method from installment_plans where id = ${plan!.id}`;
    expect(after!.card_last4).toBe('3220');
    expect(after!.processor_payment_method).not.toBe(plan!.processor_payment_method);
    const back = await c.get(`/portal/${accountId}/plans/${plan!.id}?card=back`);
    expect(pageText(back.html)).toContain('Your new card is saved: Visa •••• 3220.');

    // Another customer of the account: the plan is a 404, and so is its card form.
    await t.request('POST', '/v1/customers', { key: test, body: { email: 'someone.else@example.com' } });
    const other = await signInByEmail(accountId, 'someone.else@example.com');
    expect((await other.get(`/portal/${accountId}/plans/${plan!.id}`)).status).toBe(404);
    await other.get(`/portal/${accountId}`);
    expect((await other.post(`/portal/${accountId}/plans/${plan!.id}/card`)).status).toBe(404);
    expect(pageText((await other.get(`/portal/${accountId}`)).html)).not.toContain('1 of 3 paid');
  }, 30_000);

  it('when an open invoice is being paid by a plan, then the portal offers no Pay for it but the way to its plan', async () => {
    const { accountId, test } = await t.account();
    const customer = (await t.request('POST', '/v1/customers', { key: test, body: { email: 'kiln.payer@example.com', first_name: 'Kim' } })).body;
    const created = await t.request('POST', '/v1/invoices', {
      key: test,
      body: { customer_id: customer.id, currency: 'usd', line_items: [{ name: 'Kiln hire', quantity: 1, amount: 9000 }], allow_installments: true },
    });
    const inv = (await t.request('POST', `/v1/invoices/${created.body.id}/send`, { key: test })).body;
    const other = (await t.request('POST', `/v1/invoices`, { key: test, body: { customer_id: customer.id, currency: 'usd', line_items: [{ name: 'Glaze', quantity: 1, amount: 1500 }] } })).body;
    const open = (await t.request('POST', `/v1/invoices/${other.id}/send`, { key: test })).body;
    const payer = new Payer(t);
    await payer.get(pathOf(inv.hosted_invoice_url));
    const posted = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, { plan: '3-month', agree: 'yes' });
    const sessionId = /\/(cs_[0-9a-z]+)/.exec(posted.location!)![1]!;
    await payer.get(pathOf(posted.location!));
    expect((await payer.pay(sessionId, { email: 'kiln.payer@example.com' })).status).toBe(303);
    const [plan] = await t.sql<{ id: string }[]>`select id from installment_plans where checkout_session_id = ${sessionId}`;

    const c = await signInByEmail(accountId, 'kiln.payer@example.com');
    for (const path of [`/portal/${accountId}`, `/portal/${accountId}/invoices`, `/portal/${accountId}/invoices/${inv.id}`]) {
      const page = await c.get(path);
      expect(page.status).toBe(200);
      // The plan's invoice: its plan, never its pay page; the other open invoice keeps its Pay.
      expect(page.html, path).not.toContain(`href="${inv.hosted_invoice_url}"`);
      expect(page.html, path).toContain(`href="/portal/${accountId}/plans/${plan!.id}"`);
      if (!path.endsWith(inv.id)) expect(page.html, path).toContain(`href="${open.hosted_invoice_url}"`);
    }
    expect(pageText((await c.get(`/portal/${accountId}/invoices/${inv.id}`)).html)).toContain('Paid by installments');
  }, 30_000);
});
