import { beforeAll, describe, expect, it } from 'vitest';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { Payer, pathOf } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { invoiceRow, payInvoice, sentInvoice, startPayment } from './page-helpers.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer();
let key: string;
let accountId: string;
beforeAll(async () => {
  const account = await t.account();
  key = account.test;
  accountId = account.accountId;
  await t.sql`update accounts set business_name = ${'Tea & Co <Ltd>'} where id = ${accountId}`;
});

const paymentsOf = (invoiceId: string) => t.sql`select * from payments where invoice_id = ${invoiceId} order by id`;
const typesFor = async (id: string) => eventsFor(t, id);

describe('the hosted invoice page', () => {
  it('when an invoice is not sent yet, then its page and PDF are 404 pages; an unknown token too', async () => {
    const customer = (await t.request('POST', '/v1/customers', { key, body: { email: 'x@example.com' } })).body;
    const draft = (await t.request('POST', '/v1/invoices', { key, body: { customer_id: customer.id, currency: 'usd', line_items: [{ name: 'A', quantity: 1, amount: 100 }] } })).body;
    expect(draft.hosted_invoice_url).toBeNull();
    const [row] = await t.sql`select hosted_token from invoices where id = ${draft.id}`;
    const finalized = await t.request('POST', `/v1/invoices/${draft.id}/finalize`, { key });
    expect(finalized.body.status).toBe('OPEN');
    for (const path of [`/invoices/${row!.hosted_token}`, `/invoices/${row!.hosted_token}/pdf`, '/invoices/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/invoices/short']) {
      const res = await fetch(t.url + path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('Invoice not found');
    }
    const post = await fetch(`${t.url}/invoices/${row!.hosted_token}/pay`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(post.status).toBe(404);
    expect(await t.sql`select 1 from checkout_sessions where invoice_id = ${draft.id}`).toHaveLength(0);
  });

  it('when a sent invoice is opened, then it shows merchant, number, state, dates, description, items and amounts, escaped, with a Pay button and a PDF link', async () => {
    const inv = await sentInvoice(t, key, { line_items: [{ name: 'Design <b>review</b>', quantity: 2, amount: 3000 }, { name: 'Workshop', quantity: 1, amount: 4000 }] });
    expect(inv.hosted_invoice_url).toMatch(new RegExp(`^${t.url}/invoices/[A-Za-z0-9_-]{32}$`));
    const page = await new Payer(t).get(pathOf(inv.hosted_invoice_url));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    for (const text of [
      'Tea &amp; Co &lt;Ltd&gt;',
      `Invoice ${inv.number}`,
      '>Open<',
      'Test mode',
      'Consulting, March',
      'Design &lt;b&gt;review&lt;/b&gt;',
      '$30.00',
      '$60.00',
      'Workshop',
      '$100.00',
      'Amount paid',
      '$0.00',
      'Amount due',
      `>Pay $100.00</button>`,
      `href="${pathOf(inv.hosted_invoice_url)}/pdf"`,
      'Download PDF',
    ]) {
      expect(page.html, text).toContain(text);
    }
    const due = new Date(inv.due_date * 1000).toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' });
    expect(page.html).toContain(due);
    expect(page.html).not.toContain('<b>review');
    expect(page.html).not.toContain('SECRET-NOTE');
    // Not partial: no amount to type.
    expect(page.html).not.toContain('name="amount"');
  });

  it('when the payer pays in full via the page, then the invoice is PAID with amount due 0, invoice.paid fires once with payment.succeeded, and the page confirms', async () => {
    const inv = await sentInvoice(t, key);
    const { payer, posted, sessionId, paid } = await payInvoice(t, inv.hosted_invoice_url);
    expect(posted.location).toBe(`${t.url}/checkout/${sessionId}`);
    const session = (await t.request('GET', `/v1/checkout/sessions/${sessionId}`, { key })).body;
    expect(session).toMatchObject({ invoice_id: inv.id, amount_cents: 10_000, customer_id: inv.customer_id, description: `Invoice ${inv.number}`, status: 'COMPLETE' });
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`${inv.hosted_invoice_url}?paid=${sessionId}`);

    const after = (await t.request('GET', `/v1/invoices/${inv.id}`, { key })).body;
    expect(after).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000, amount_due_cents: 0 });
    expect(after.paid_at).toBeGreaterThan(0);
    const [payment] = await paymentsOf(inv.id);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', amount_cents: 10_000, invoice_id: inv.id });
    expect((await t.request('GET', `/v1/payments/${payment!.id}`, { key })).body.invoice_id).toBe(inv.id);
    expect(await typesFor(payment!.id)).toEqual(['payment.succeeded']);
    const invoiceEvents = await eventObjects(t, inv.id);
    expect(invoiceEvents.filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
    expect(invoiceEvents.find((e) => e.type === 'invoice.paid')!.object).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
    expect(invoiceEvents.map((e) => e.type)).not.toContain('invoice.updated');

    const back = await payer.get(pathOf(paid.location!));
    expect(back.status).toBe(200);
    expect(back.html).toContain('Payment of $100.00 received');
    expect(back.html).toContain('paid in full');
    expect(back.html).toContain(`/checkout/${sessionId}/receipt`);
    expect(back.html).toContain('>Paid<');
    expect(back.html).not.toContain('<form');
    expect(back.html).toContain('Download PDF');

    // The page is paid: posting again opens nothing.
    const again = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, {});
    expect(again.status).toBe(409);
    expect(again.html).toContain('This invoice is paid');
    expect(await t.sql`select 1 from checkout_sessions where invoice_id = ${inv.id}`).toHaveLength(1);
  });

  it('when partial payments are allowed, then two payments of a chosen amount make it PAID: invoice.updated then invoice.paid, each payment.succeeded', async () => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true, minimum_payment_cents: 1000 });
    const page = await new Payer(t).get(pathOf(inv.hosted_invoice_url));
    expect(page.html).toContain('<label for="amount">Amount to pay (USD)</label>');
    expect(page.html).toContain('value="100.00"');
    expect(page.html).toContain('Any amount from $10.00 to $100.00.');

    const first = await payInvoice(t, inv.hosted_invoice_url, '40.00');
    expect(first.paid.status).toBe(303);
    let row = await invoiceRow(t, inv.id);
    expect(row).toMatchObject({ status: 'OPEN', amount_paid_cents: 4000, amount_due_cents: 6000 });
    const back = await first.payer.get(pathOf(first.paid.location!));
    expect(back.html).toContain('Payment of $40.00 received');
    expect(back.html).toContain('The amount due is now $60.00');
    expect(back.html).toContain('value="60.00"');

    const second = await payInvoice(t, inv.hosted_invoice_url, '60');
    expect(second.paid.status).toBe(303);
    row = await invoiceRow(t, inv.id);
    expect(row).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000, amount_due_cents: 0 });
    expect((await paymentsOf(inv.id)).map((p) => [p.status, p.amount_cents])).toEqual([
      ['SUCCEEDED', 4000],
      ['SUCCEEDED', 6000],
    ]);
    for (const p of await paymentsOf(inv.id)) expect(await typesFor(p.id)).toEqual(['payment.succeeded']);
    const types = (await eventObjects(t, inv.id)).map((e) => e.type).filter((x) => x === 'invoice.updated' || x === 'invoice.paid');
    expect(types).toEqual(['invoice.updated', 'invoice.paid']);
    const updated = (await eventObjects(t, inv.id)).find((e) => e.type === 'invoice.updated')!.object;
    expect(updated).toMatchObject({ status: 'OPEN', amount_paid_cents: 4000, amount_due_cents: 6000 });
  });

  it.each([
    ['', 'Enter the amount to pay'],
    ['abc', 'as a number'],
    ['-5', 'as a number'],
    ['12.345', 'at most 2 decimals'],
    ['0', 'more than zero'],
    ['100.01', 'cannot be more than the amount due, $100.00'],
    ['9.99', 'at least $10.00 (the minimum payment)'],
  ])('when the amount "%s" is posted, then a 400 page names the amount field (%s) and no session is opened', async (amount, message) => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true, minimum_payment_cents: 1000 });
    const { posted } = await startPayment(t, inv.hosted_invoice_url, amount);
    expect(posted.status).toBe(400);
    expect(posted.headers.get('content-type')).toContain('text/html');
    expect(posted.html).toContain(message);
    expect(posted.html).toContain('aria-invalid="true"');
    expect(posted.html).toContain('id="amount-error"');
    expect(posted.html).toContain('<label for="amount">');
    expect(posted.html).toContain(`value="${amount}"`);
    expect(await t.sql`select 1 from checkout_sessions where invoice_id = ${inv.id}`).toHaveLength(0);
  });

  it('when an amount is posted on an invoice without partial payments, then the session is for the whole amount due', async () => {
    const inv = await sentInvoice(t, key);
    const { sessionId } = await startPayment(t, inv.hosted_invoice_url, '1.00');
    const [session] = await t.sql`select amount_cents from checkout_sessions where id = ${sessionId}`;
    expect(session!.amount_cents).toBe(10_000);
  });

  it('when the same amount is asked twice, then the open session is handed out again; another amount opens another', async () => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true });
    const a = await startPayment(t, inv.hosted_invoice_url, '25');
    const b = await startPayment(t, inv.hosted_invoice_url, '25.00');
    const c = await startPayment(t, inv.hosted_invoice_url, '30');
    expect(b.sessionId).toBe(a.sessionId);
    expect(c.sessionId).not.toBe(a.sessionId);
    expect(await t.sql`select 1 from checkout_sessions where invoice_id = ${inv.id}`).toHaveLength(2);
  });

  it('when the form is posted without its CSRF token, then it answers 403 and opens no session', async () => {
    const inv = await sentInvoice(t, key);
    const payer = new Payer(t);
    await payer.get(pathOf(inv.hosted_invoice_url));
    const forged = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, { _csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect(forged.html).toContain('This form has expired');
    expect(await t.sql`select 1 from checkout_sessions where invoice_id = ${inv.id}`).toHaveLength(0);
  });

  it('when the invoice is voided, then its page says Void with no form, a post is refused and a session opened before cannot charge', async () => {
    const inv = await sentInvoice(t, key);
    const early = await startPayment(t, inv.hosted_invoice_url);
    expect(early.sessionId).not.toBeNull();
    expect((await t.request('POST', `/v1/invoices/${inv.id}/void`, { key })).body.status).toBe('VOID');

    const payer = new Payer(t);
    const page = await payer.get(pathOf(inv.hosted_invoice_url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('>Void<');
    expect(page.html).toContain('voided');
    expect(page.html).not.toContain('<form');
    expect(page.html).not.toContain('<button');
    expect(page.html).toContain('None (void)');
    const post = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, { _csrf: 'x' });
    expect(post.status).toBe(409);
    expect(post.html).toContain('This invoice was voided.');

    const charge = await early.payer.pay(early.sessionId!);
    expect(charge.status).toBe(409);
    expect(charge.html).toContain('This invoice was voided.');
    expect(await paymentsOf(inv.id)).toHaveLength(0);
    expect((await invoiceRow(t, inv.id)).amount_paid_cents).toBe(0);
  });

  it('when a payment of an UNCOLLECTIBLE invoice pays it off, then it becomes PAID', async () => {
    const inv = await sentInvoice(t, key);
    expect((await t.request('POST', `/v1/invoices/${inv.id}/mark-uncollectible`, { key })).body.status).toBe('UNCOLLECTIBLE');
    const { paid } = await payInvoice(t, inv.hosted_invoice_url);
    expect(paid.status).toBe(303);
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
    expect((await eventObjects(t, inv.id)).filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
  });
});

describe('paying an invoice on the hosted checkout', () => {
  it('when the card is declined, then nothing is paid on the invoice and the payer can pay again', async () => {
    const inv = await sentInvoice(t, key);
    const { payer, sessionId, paid } = await payInvoice(t, inv.hosted_invoice_url, undefined, { card_number: CARDS.declined });
    expect(paid.status).toBe(402);
    expect(paid.html).toContain('declined');
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'OPEN', amount_paid_cents: 0 });
    const again = await payer.pay(sessionId!);
    expect(again.status).toBe(303);
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000 });
    expect((await paymentsOf(inv.id)).map((p) => p.status)).toEqual(['FAILED', 'SUCCEEDED']);
  });

  it('when 3-D Secure is required and completed, then the invoice is paid', async () => {
    const inv = await sentInvoice(t, key);
    const { payer, sessionId, paid } = await payInvoice(t, inv.hosted_invoice_url, undefined, { card_number: CARDS.threeDS });
    expect(paid.status).toBe(303);
    expect(paid.location).toMatch(new RegExp(`^/checkout/${sessionId}/authenticate\\?payment=pay_`));
    const paymentId = new URL(paid.location!, t.url).searchParams.get('payment')!;
    await payer.get(paid.location!);
    // While the challenge waits, nothing is paid yet.
    expect((await invoiceRow(t, inv.id)).amount_paid_cents).toBe(0);
    const done = await payer.post(`/checkout/${sessionId}/authenticate`, { payment: paymentId, outcome: 'complete' });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`${inv.hosted_invoice_url}?paid=${sessionId}`);
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
  });

  it('when another payer pays the last amount while a 3-D Secure challenge waits, then completing the challenge is refused uncharged', async () => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true });
    const slow = await payInvoice(t, inv.hosted_invoice_url, '60', { card_number: CARDS.threeDS });
    const paymentId = new URL(slow.paid.location!, t.url).searchParams.get('payment')!;
    await slow.payer.get(slow.paid.location!);
    // The challenge's attempt is not in flight: it holds nothing, so the whole amount can be paid meanwhile.
    const fast = await payInvoice(t, inv.hosted_invoice_url, '100.00');
    expect(fast.sessionId).not.toBe(slow.sessionId);
    expect(fast.paid.status).toBe(303);
    const done = await slow.payer.post(`/checkout/${slow.sessionId}/authenticate`, { payment: paymentId, outcome: 'complete' });
    expect(done.status).toBe(409);
    expect(done.html).toContain('This invoice is paid.');
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000 });
    expect((await paymentsOf(inv.id)).map((p) => [p.status, p.amount_cents])).toEqual([
      ['FAILED', 6000],
      ['SUCCEEDED', 10_000],
    ]);
  });
});

describe('a live invoice while live payments are off (no live processor keys)', () => {
  it('when a live invoice is opened, then it shows the amounts with no pay form, and a post opens no session', async () => {
    const { live } = await t.account();
    const inv = await sentInvoice(t, live);
    expect(inv.livemode).toBe(true);
    const payer = new Payer(t);
    const page = await payer.get(pathOf(inv.hosted_invoice_url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('cannot take live payments yet');
    expect(page.html).not.toContain('<form');
    expect(page.html).not.toContain('Test mode');
    // The merchant's setup, not an outage (issue 21): a 4xx, never a 5xx.
    const post = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, {});
    expect(post.status).toBe(409);
    expect(post.html).toContain('cannot take live payments yet');
    expect(await t.sql`select 1 from checkout_sessions where invoice_id = ${inv.id}`).toHaveLength(0);
  });
});

describe('card-testing limit on opening checkouts from the invoice page', () => {
  const limited = useTestServer({ env: { RATE_LIMIT_LINK_SESSIONS_PER_HOUR: '3' } });

  it('when one client posts the Pay form more often than the hourly limit, then the next post is a 429 page with Retry-After and opens nothing', async () => {
    const k = (await limited.account()).test;
    const inv = await sentInvoice(limited, k, { allow_partial_payments: true });
    const payer = new Payer(limited);
    await payer.get(pathOf(inv.hosted_invoice_url));
    for (const amount of ['10', '11', '12']) expect((await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, { amount })).status).toBe(303);
    const refused = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, { amount: '13' });
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('Too many checkouts');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.sql`select amount_cents from checkout_sessions where invoice_id = ${inv.id} order by id`).toEqual([
      { amount_cents: 1000 },
      { amount_cents: 1100 },
      { amount_cents: 1200 },
    ]);
  });
});
