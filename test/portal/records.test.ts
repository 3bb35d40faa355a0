import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { pathOf, Payer, payInvoice } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { createCustomer, createSession, paidPayment, sentInvoice } from '../helpers/factories.ts';
import { livePayment, merchantLink, pageText, PortalClient, signedIn } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

// What a signed-in customer sees, and what they can never reach: another customer's records, another
// account's, the other mode's. Every record page of one is refused to the others with the 404 page a
// made-up id gets.
const t = useTestServer();

/** An installment plan of the customer with its parts, written as the installments component records one. */
async function plan(accountId: string, key: string, livemode: boolean, customerId: string, description: string) {
  const cs = await createSession(t, key, { amount: 3000, customer_id: livemode ? undefined : customerId });
  const id = newId('ip');
  await t.sql`
    insert into installment_plans (id, account_id, livemode, customer_id, payment_link_id, checkout_session_id, currency, total_cents, count,
      interval, email, description, processor_payment_method, card_brand, card_last4, agreement_text, agreed_at)
    values (${id}, ${accountId}, ${livemode}, ${customerId}, 'pl_portal_test', ${cs.id}, 'usd', 9000, 3, 'month', 'plan@example.com',
      ${description}, 'pm_sim_x', 'visa', '4242', 'I agree to pay in 3 parts.', now())`;
  await t.sql`
    insert into installments (plan_id, number, amount_cents, due_at, status, next_attempt_at, paid_at)
    values (${id}, 1, 3000, now(), 'PAID', null, now()),
           (${id}, 2, 3000, now() + interval '1 month', 'SCHEDULED', now() + interval '1 month', null),
           (${id}, 3, 3000, now() + interval '2 months', 'SCHEDULED', now() + interval '2 months', null)`;
  return id;
}

interface Records {
  accountId: string;
  key: string;
  customer: string;
  payment: string;
  invoice: string;
  plan: string;
}

let mine: Records;
let neighbour: Records; // another customer of the same account and mode
let otherAccount: Records;
let liveTwin: Records; // the same person, live mode of the same account
let paidInvoice: { id: string; number: string; hosted_invoice_url: string };
let refundedPayment: string;
let receiptSession: string;

async function records(accountId: string, key: string, email: string, label: string, livemode = false): Promise<Records> {
  const cus = await createCustomer(t, key, { email, first_name: label });
  const payment = livemode ? await livePayment(t, accountId, cus.id) : (await paidPayment(t, key, { customer_id: cus.id, amount: 1234, description: `${label}'s order` })).paymentId;
  const invoice = await sentInvoice(t, key, { customer_id: cus.id, description: `${label}'s invoice`, due_date: undefined, line_items: [{ name: 'Design review', quantity: 2, amount: 3000 }] });
  return { accountId, key, customer: cus.id, payment, invoice: invoice.id, plan: await plan(accountId, key, livemode, cus.id, `${label}'s plan`) };
}

beforeAll(async () => {
  const a = await t.account();
  const b = await t.account();
  await t.sql`update accounts set business_name = 'Harbour Tea Rooms', brand_color = '#0a7c55', support_email = 'help@harbour.example' where id = ${a.accountId}`;
  mine = await records(a.accountId, a.test, 'ada@example.com', 'Ada');
  neighbour = await records(a.accountId, a.test, 'grace@example.com', 'Grace');
  otherAccount = await records(b.accountId, b.test, 'ada@example.com', 'Ada-B');
  liveTwin = await records(a.accountId, a.live, 'ada@example.com', 'Ada-live', true);

  // More of mine: a paid invoice (paid on its hosted page) and a payment partly refunded.
  const inv = await sentInvoice(t, a.test, { customer_id: mine.customer, due_date: undefined, description: 'Tea tasting', line_items: [{ name: 'Tasting for two', quantity: 1, amount: 4500 }] });
  if ((await payInvoice(t, inv.hosted_invoice_url)).paid.status !== 303) throw new Error('invoice not paid');
  paidInvoice = inv;
  const refunded = await paidPayment(t, a.test, { customer_id: mine.customer, amount: 5000, description: 'Teapot' });
  refundedPayment = refunded.paymentId;
  receiptSession = refunded.sessionId;
  const refund = await t.request('POST', '/v1/refunds', { key: a.test, body: { payment_id: refunded.paymentId, amount: 1500 } });
  if (refund.status !== 200) throw new Error(`refund: ${refund.status}`);
  await t.sql`update refunds set status = 'SUCCEEDED' where id = ${refund.body.id}`;
  await t.sql`update payments set amount_refunded_cents = 1500 where id = ${refunded.paymentId}`;
});

const portal = (r: Records) => `/portal/${r.accountId}`;
const paths = (r: Records) => [`/payments/${r.payment}`, `/invoices/${r.invoice}`, `/plans/${r.plan}`];

describe("a signed-in customer's own records", () => {
  it('when the overview opens, then it shows their payments, their open invoice with Pay, their paid invoice with its PDF and their plan, in the merchant\'s branding, and no one else\'s', async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    const home = await c.get(portal(mine));
    expect(home.status).toBe(200);
    expect(home.headers.get('cache-control')).toBe('no-store');
    const csp = home.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('script-src');
    expect(home.html).not.toContain('<script');
    expect(home.html).toContain('Harbour Tea Rooms');
    expect(home.html).toContain('.btn{background:#0a7c55');
    expect(home.html).toContain('help@harbour.example');
    const text = pageText(home.html);
    expect(text).toContain("Ada's order");
    expect(text).toContain('$12.34');
    expect(text).toContain('Teapot');
    expect(text).toContain('Partly refunded');
    expect(text).toContain('Visa •••• 4242');
    expect(home.html).toContain(`href="${paidInvoice.hosted_invoice_url}/pdf"`);
    expect(text).toContain("Ada's plan");
    expect(text).toContain('1 of 3 paid');
    expect(text).toContain('Invoices to pay');
    const [open] = await t.sql`select hosted_token, number from invoices where id = ${mine.invoice}`;
    expect(home.html).toContain(`<a class="btn small" href="${t.s.config.invoiceUrl}/${open!.hosted_token}">Pay`);
    for (const other of [neighbour, otherAccount, liveTwin]) {
      expect(text).not.toContain(other.payment);
      expect(home.html).not.toContain(other.invoice);
      expect(home.html).not.toContain(other.plan);
    }
    expect(text).not.toContain('Grace');
    expect(text).not.toContain('Ada-live');
    expect(text).not.toContain('Ada-B');
  });

  it('when a payment opens, then its refunds and its receipt link are there', async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    const page = await c.get(`${portal(mine)}/payments/${refundedPayment}`);
    expect(page.status).toBe(200);
    const text = pageText(page.html);
    expect(text).toContain('Teapot');
    expect(text).toContain('$50.00');
    expect(text).toContain('Refunded $15.00');
    expect(text).toMatch(/Refund Status Amount .* Refunded \$15\.00/);
    expect(page.html).toContain(`href="${t.s.config.checkoutUrl}/${receiptSession}/receipt">View receipt</a>`);
    const receipt = await c.get(`${pathOf(t.s.config.checkoutUrl)}/${receiptSession}/receipt`);
    expect(receipt.status).toBe(200);
  });

  it('when an open invoice opens, then it has its items, Pay (the hosted invoice page) and the PDF; a paid one has no Pay', async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    const open = await c.get(`${portal(mine)}/invoices/${mine.invoice}`);
    expect(open.status).toBe(200);
    const [row] = await t.sql`select hosted_token from invoices where id = ${mine.invoice}`;
    expect(open.html).toContain(`<a class="btn" href="${t.s.config.invoiceUrl}/${row!.hosted_token}">Pay $60.00</a>`);
    expect(pageText(open.html)).toContain('Design review 2 $60.00');
    const paid = await c.get(`${portal(mine)}/invoices/${paidInvoice.id}`);
    expect(pageText(paid.html)).toContain('Paid');
    expect(paid.html).not.toContain('>Pay ');
    expect(paid.html).toContain('Download PDF');
  });

  it('when a plan opens, then its schedule, what is paid and its card are there', async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    const page = await c.get(`${portal(mine)}/plans/${mine.plan}`);
    expect(page.status).toBe(200);
    const text = pageText(page.html);
    expect(text).toContain('3 monthly payments');
    expect(text).toContain('Paid so far $30.00 (1 of 3)');
    expect(text).toMatch(/1\. .* Paid \$30\.00 2\. .* Scheduled \$30\.00 3\. .* Scheduled \$30\.00/);
    expect((await c.get(`${portal(mine)}/plans`)).status).toBe(200);
  });

  it('when the lists are paged, then each page holds 20, newest first, and Older leads on', async () => {
    const cus = await createCustomer(t, mine.key, { email: 'many@example.com' });
    for (let i = 0; i < 23; i++) {
      await t.sql`
        insert into payments (id, account_id, livemode, status, amount_cents, currency, customer_id, description, succeeded_at)
        values (${newId('pay')}, ${mine.accountId}, false, 'SUCCEEDED', ${100 + i}, 'usd', ${cus.id}, ${`Order ${i}`}, now())`;
    }
    const c = await signedIn(t, mine.key, cus.id);
    const first = await c.get(`${portal(mine)}/payments`);
    expect(first.html.match(/<li><span class="what">/g)).toHaveLength(20);
    expect(pageText(first.html)).toContain('Order 22');
    const older = /href="([^"]+older_than=[^"]+)"/.exec(first.html)![1]!;
    const second = await c.get(older.replaceAll('&amp;', '&'));
    expect(second.html.match(/<li><span class="what">/g)).toHaveLength(3);
    expect(pageText(second.html)).toContain('Order 0');
    expect(second.html).not.toContain('older_than=');
    expect((await c.get(`${portal(mine)}/payments?older_than=nope`)).status).toBe(400);
  });
});

describe('isolation', () => {
  const missing = { payment: newId('pay'), invoice: newId('in'), plan: newId('ip') };

  it.each([
    ['another customer of the same account', () => neighbour],
    ['a customer of another account', () => otherAccount],
    ['the same email in live mode', () => liveTwin],
  ])('when a test-mode session of one customer asks for a record of %s, then every record page is the 404 of a missing id', async (_name, other) => {
    const c = await signedIn(t, mine.key, mine.customer);
    const notFound = async (path: string) => {
      const res = await c.get(`${portal(mine)}${path}`);
      expect(res.status, path).toBe(404);
      return pageText(res.html);
    };
    const [p, i, pl] = await Promise.all(paths(other()).map(notFound));
    expect(p).toBe(await notFound(`/payments/${missing.payment}`));
    expect(i).toBe(await notFound(`/invoices/${missing.invoice}`));
    expect(pl).toBe(await notFound(`/plans/${missing.plan}`));
    expect(p).toContain('There is no such payment in your account.');
    // The customer's own records answer, so the refusals are about whose they are.
    for (const path of paths(mine)) expect((await c.get(`${portal(mine)}${path}`)).status, path).toBe(200);
  });

  it('when the live-mode twin signs in, then only live records show, and the test ones are 404', async () => {
    const c = await signedIn(t, liveTwin.key, liveTwin.customer);
    const home = await c.get(portal(liveTwin));
    expect(home.html).not.toContain('Test mode');
    expect(pageText(home.html)).toContain('Live order');
    expect(home.html).not.toContain(mine.payment);
    for (const path of paths(mine)) expect((await c.get(`${portal(mine)}${path}`)).status, path).toBe(404);
    for (const path of paths(liveTwin)) expect((await c.get(`${portal(liveTwin)}${path}`)).status, path).toBe(200);
  });

  it("when one account's session cookie is sent to another account's record pages, then they send it to sign in", async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    const stranger = new PortalClient(t);
    stranger.cookies.set('portal_session', c.cookies.get('portal_session')!);
    for (const path of paths(otherAccount)) {
      const res = await stranger.get(`${portal(otherAccount)}${path}`);
      expect(res.status, path).toBe(303);
      expect(res.location).toBe(portal(otherAccount));
    }
  });

  it('when no one is signed in, then every record page, list and the overview lead to the sign-in form', async () => {
    for (const path of [...paths(mine), '/payments', '/invoices', '/plans', '/nowhere']) {
      const res = await new PortalClient(t).get(`${portal(mine)}${path}`);
      expect(res.status, path).toBe(303);
      expect(res.location).toBe(portal(mine));
    }
    const link = await merchantLink(t, mine.key, mine.customer);
    expect(link.url).toContain(portal(mine));
  });
});

describe("replacing an active plan's card", () => {
  it('when the customer presses "Replace the card", then a setup session of the hosted checkout opens for this plan, coming back to the plan page', async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    const page = await c.get(`${portal(mine)}/plans/${mine.plan}`);
    expect(page.html).toContain(`<form method="post" action="${portal(mine)}/plans/${mine.plan}/card">`);
    expect(page.html).toContain('Replace the card');
    const res = await c.post(`${portal(mine)}/plans/${mine.plan}/card`);
    expect(res.status).toBe(303);
    const sessionId = /\/(cs_[0-9a-z]+)$/.exec(res.location!)![1]!;
    expect(res.location).toBe(`${t.s.config.checkoutUrl}/${sessionId}`);
    const [session] = await t.sql`select * from checkout_sessions where id = ${sessionId}`;
    expect(session).toMatchObject({
      mode: 'setup',
      livemode: false,
      account_id: mine.accountId,
      customer_id: mine.customer,
      installment: { kind: 'card_update', plan_id: mine.plan },
      success_url: `${t.url}${portal(mine)}/plans/${mine.plan}?card=back`,
    });
    // Back without saving: the page says the card was not changed.
    const back = await c.get(`${portal(mine)}/plans/${mine.plan}?card=back`);
    expect(pageText(back.html)).toContain('The card was not changed.');
  });

  it('when the customer replaces the card on the hosted checkout, 3-D Secure included, then the plan has the new card and the portal says so', async () => {
    const planId = await plan(mine.accountId, mine.key, false, mine.customer, 'Card update plan');
    const c = await signedIn(t, mine.key, mine.customer);
    await c.get(`${portal(mine)}/plans/${planId}`);
    const opened = await c.post(`${portal(mine)}/plans/${planId}/card`);
    expect(opened.status).toBe(303);
    const checkout = pathOf(opened.location!);
    const payer = new Payer(t);
    expect((await payer.get(checkout)).html).toContain('Save card');
    const saved = await payer.post(`${checkout}/pay`, { email: 'ada@example.com', name: 'Ada Lovelace', card_number: CARDS.threeDS, expiry: '12/34', cvc: '123' });
    expect(saved.status).toBe(303);
    const setup = /setup=(seti_[0-9a-z]+)/.exec(saved.location!)![1]!;
    await payer.get(pathOf(saved.location!));
    const confirmed = await payer.post(`${checkout}/authenticate`, { setup, outcome: 'complete' });
    expect(confirmed.status).toBe(303);
    const done = await payer.get(pathOf(confirmed.location!));
    expect(done.html).toContain(`href="${t.url}${portal(mine)}/plans/${planId}?card=back"`);
    const [row] = await t.sql`select card_brand, card_last4 from installment_plans where id = ${planId}`;
    expect(row).toEqual({ card_brand: 'visa', card_last4: '3220' });
    const back = await c.get(`${portal(mine)}/plans/${planId}?card=back`);
    expect(pageText(back.html)).toContain('Your new card is saved: Visa •••• 3220. The next payments are taken from it.');
    expect(pageText(back.html)).toContain('Card Visa •••• 3220');
  });

  it("when the form is posted without its token, for another customer's plan, or for a plan no longer active, then it is refused and no session opens", async () => {
    const c = await signedIn(t, mine.key, mine.customer);
    await c.get(`${portal(mine)}/plans/${mine.plan}`);
    const count = async () => (await t.sql`select count(*)::int as n from checkout_sessions where mode = 'setup'`)[0]!.n as number;
    const before = await count();
    expect((await c.send('POST', `${portal(mine)}/plans/${mine.plan}/card`, {})).status).toBe(403);
    expect((await c.post(`${portal(mine)}/plans/${neighbour.plan}/card`)).status).toBe(404);
    expect((await c.post(`${portal(mine)}/plans/${otherAccount.plan}/card`)).status).toBe(404);
    const done = await plan(mine.accountId, mine.key, false, mine.customer, 'Finished plan');
    await t.sql`update installment_plans set status = 'COMPLETED', completed_at = now() where id = ${done}`;
    const page = await c.get(`${portal(mine)}/plans/${done}`);
    expect(page.html).not.toContain('Replace the card');
    expect((await c.post(`${portal(mine)}/plans/${done}/card`)).status).toBe(409);
    expect(await count()).toBe(before);
  });
});
