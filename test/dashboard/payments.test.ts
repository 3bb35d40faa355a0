import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVIDENCE_FIELDS } from '../../src/disputes/schema.ts';
import { newId } from '../../src/lib/ids.ts';
import { eventsFor } from '../helpers/events.ts';
import { Payer, payInvoice, payThroughLink } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DashClient, formKey, signedIn, type Answer } from './client.ts';
import { CARDS } from '../helpers/cards.ts';
import { createLink, createSession, disputed, paidPayment, sentInvoice } from '../helpers/factories.ts';

// Workers: refunds settle through their job, and disputes are learnt of through theirs.
// The service's error lines, kept to explain an unexpected answer in an assertion's message.
const serviceErrors: string[] = [];
const t = useTestServer({
  workers: true,
  env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' },
  log: pino({ level: 'error' }, { write: (line: string) => void serviceErrors.push(line) }),
});

type Acct = { accountId: string; test: string; live: string };
let a: Acct;
let b: Acct;
let c: DashClient; // signed in to account A, test mode
let customerId: string;
let withCustomer: string; // A: 19.99 usd, SUCCEEDED, of customerId
let failed: string; // A: 7.00 usd, FAILED (declined)
let plain: string; // A: 5.00 usd, SUCCEEDED, no customer
let otherAccount: string; // B: SUCCEEDED
const LIVE = newId('pay'); // written directly: live charges need Stripe

const P = (id: string) => `/dashboard/payments/${id}`;
const refundRows = (paymentId: string) => t.sql`select * from refunds where payment_id = ${paymentId} order by id`;
const paymentRow = async (id: string) => (await t.sql`select * from payments where id = ${id}`)[0]!;
const disputeRow = async (id: string) => (await t.sql`select * from disputes where id = ${id}`)[0]!;

/** What a browser posts for the evidence form: every field, with the page's hidden fields. */
function postEvidence(client: DashClient, path: string, fields: Record<string, string>, extra: Record<string, string> = {}): Promise<Answer> {
  return client.send('POST', path, { _csrf: client.token, form_mode: client.mode, idempotency_key: formKey(), ...extra, ...fields });
}

/** Every evidence field as the form sends it (all of them, empty ones included). */
const evidenceForm = (values: Record<string, string>) => ({ ...Object.fromEntries(Object.keys(EVIDENCE_FIELDS).map((k) => [k, ''])), ...values });

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  const cus = await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'ada@example.com', first_name: 'Ada' } });
  customerId = cus.body.id;
  const pay = async (key: string, body: Record<string, unknown>, card: string = CARDS.visa) => {
    const cs = await createSession(t, key, body);
    await new Payer(t).pay(cs.id, { card_number: card });
    const [row] = await t.sql`select id from payments where checkout_session_id = ${cs.id}`;
    return row!.id as string;
  };
  withCustomer = await pay(a.test, { amount: 1999, customer_id: customerId, description: 'Green tea, 100 g' });
  failed = await pay(a.test, { amount: 700 }, CARDS.declined);
  plain = await pay(a.test, { amount: 500 });
  otherAccount = await pay(b.test, { amount: 12345, currency: 'eur' });
  await t.sql`insert into payments (id, account_id, livemode, status, amount_cents, currency, succeeded_at, description)
    values (${LIVE}, ${a.accountId}, true, 'SUCCEEDED', 77700, 'usd', now(), 'Live only')`;
  c = await signedIn(t, a.accountId, 'payments-a@example.com');
});

describe('the list of payments', () => {
  it('when opened, then it lists the session account’s test payments newest first, with card, badges, customer link and a link to each', async () => {
    const res = await c.get('/dashboard/payments');
    expect(res.status).toBe(200);
    const html = res.html;
    expect(html).toContain('<h1>Payments</h1>');
    expect(html.indexOf(P(plain))).toBeLessThan(html.indexOf(P(failed)));
    expect(html.indexOf(P(failed))).toBeLessThan(html.indexOf(P(withCustomer)));
    expect(html).toContain(`<a href="${P(withCustomer)}">$19.99</a>`);
    expect(html).toContain('Visa •••• 4242');
    expect(html).toContain('Green tea, 100 g');
    expect(html).toContain(`<a href="/dashboard/customers/${customerId}">payer@example.com</a>`);
    expect(html).toMatch(/<span class="badge bad">FAILED<\/span>/);
    expect(html).not.toContain(P(otherAccount));
    expect(html).not.toContain('€123.45');
    expect(html).not.toContain(LIVE);
    expect(html).not.toContain('Live only');
  });

  it('when filtered by status or customer, then only those show; empty filters are no filter; a bad status is a 400 naming it', async () => {
    const onlyFailed = await c.get('/dashboard/payments?status=FAILED');
    expect(onlyFailed.html).toContain(P(failed));
    expect(onlyFailed.html).not.toContain(P(plain));
    expect(onlyFailed.html).toMatch(/<option value="FAILED" selected>/);
    const ofCustomer = await c.get(`/dashboard/payments?customer=${customerId}`);
    expect(ofCustomer.html).toContain(P(withCustomer));
    expect(ofCustomer.html).not.toContain(P(plain));
    const any = await c.get('/dashboard/payments?status=&customer=');
    expect(any.status).toBe(200);
    expect(any.html).toContain(P(plain));
    expect(any.html).toContain(P(failed));
    const none = await c.get('/dashboard/payments?customer=cus_nobody');
    expect(none.html).toContain('No payments match these filters.');
    const bad = await c.get('/dashboard/payments?status=REFUNDED');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('Invalid status');
  });

  it('when there are more than a page, then Older and Newer walk the pages by cursor, keeping the filter', async () => {
    const first = await c.get('/dashboard/payments?limit=2');
    expect(first.html).toContain(P(plain));
    expect(first.html).toContain(P(failed));
    expect(first.html).not.toContain(P(withCustomer));
    const older = /href="([^"]+)" rel="next"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toBe(`/dashboard/payments?limit=2&starting_after=${failed}`);
    const second = await c.get(older);
    expect(second.html).toContain(P(withCustomer));
    expect(second.html).not.toContain(P(plain));
    const newer = /href="([^"]+)" rel="prev"/.exec(second.html)![1]!.replaceAll('&amp;', '&');
    expect(newer).toBe(`/dashboard/payments?limit=2&ending_before=${withCustomer}`);
    const back = await c.get(newer);
    expect(back.html).toContain(P(plain));
    expect(back.html).toContain(P(failed));
    const filtered = await c.get('/dashboard/payments?status=SUCCEEDED&limit=1');
    expect(/href="([^"]+)" rel="next"/.exec(filtered.html)![1]).toBe(`/dashboard/payments?status=SUCCEEDED&amp;limit=1&amp;starting_after=${plain}`);
  });
});

describe('the page of a payment', () => {
  it('when a payment succeeded, then it shows amount, card, payer, where it came from, the receipt, times, and the refund form prefilled with all of it', async () => {
    const res = await c.get(P(withCustomer));
    expect(res.status).toBe(200);
    const [row] = await t.sql`select * from payments where id = ${withCustomer}`;
    const h = res.html;
    expect(h).toContain('<h1>$19.99 USD</h1>');
    expect(h).toContain('Visa •••• 4242');
    expect(h).toContain('payer@example.com');
    expect(h).toContain('Ada Lovelace'); // billing name
    expect(h).toContain(`href="/dashboard/checkout-sessions/${row!.checkout_session_id}"`);
    expect(h).toContain(`href="/dashboard/customers/${customerId}"`);
    expect(h).toContain(`href="${t.url}/checkout/${row!.checkout_session_id}/receipt"`);
    expect(h).toContain('<dt>Succeeded</dt>');
    expect(h).toMatch(/<input type="text" id="amount" name="amount"[^>]*value="19.99">/);
    expect(h).toMatch(/<option value="requested_by_customer">Requested by the customer<\/option>/);
    expect(h).toContain('Not refunded.');
  });

  it('when a payment failed, then it shows the failure code and message and offers no refund', async () => {
    const res = await c.get(P(failed));
    const row = await paymentRow(failed);
    expect(res.html).toContain(`<span class="mono">${row.failure_code}</span>`);
    expect(res.html).toContain(row.failure_message);
    expect(res.html).not.toContain('action="/dashboard/payments/' + failed + '/refunds"');
    expect(res.html).not.toContain('Open the receipt');
  });

  it('when a payment came through a payment link or an invoice, then it links to them', async () => {
    const link = await createLink(t, a.test, { amount: 2500 });
    const { sessionId } = await payThroughLink(t, link.url);
    const [viaLink] = await t.sql`select id from payments where checkout_session_id = ${sessionId}`;
    const linkPage = await c.get(P(viaLink!.id));
    expect(linkPage.html).toContain(`href="/dashboard/payment-links/${link.id}"`);
    expect(linkPage.html).toContain('(opened directly)');

    const invoice = await sentInvoice(t, a.test);
    await payInvoice(t, invoice.hosted_invoice_url);
    const [viaInvoice] = await t.sql`select id, customer_id from payments where invoice_id = ${invoice.id}`;
    const invoicePage = await c.get(P(viaInvoice!.id));
    expect(invoicePage.html).toContain(`href="/dashboard/invoices/${invoice.id}"`);
    expect(invoicePage.html).toContain(`href="/dashboard/customers/${viaInvoice!.customer_id}"`);
  });

  it.each([
    ['another account’s payment', () => otherAccount],
    ['a live payment in test mode', () => LIVE],
    ['an unknown id', () => 'pay_00000000000000000000000000'],
    ['something that is no id', () => 'nope'],
  ])('when it is %s, then 404', async (_name, id) => {
    const res = await c.get(P(id()));
    expect(res.status).toBe(404);
    expect(res.html).toContain('Not found');
  });

  it('when switched to live, then the live payment shows and the test ones do not', async () => {
    const live = await signedIn(t, a.accountId, 'payments-live@example.com');
    expect((await live.post('/dashboard/mode', { mode: 'live', back: '/dashboard/payments' })).location).toBe('/dashboard/payments');
    const list = await live.get('/dashboard/payments');
    expect(list.html).toContain(P(LIVE));
    expect(list.html).not.toContain(P(plain));
    expect((await live.get(P(LIVE))).status).toBe(200);
    expect((await live.get(P(plain))).status).toBe(404);
    // No live processor is configured: a live refund is refused before anything is recorded.
    const refused = await live.post(`${P(LIVE)}/refunds`, { amount: '1.00', reason: '' });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('no live card processor is configured');
    expect(await refundRows(LIVE)).toEqual([]);
  });

  it('when signed out, then the pages send to the sign-in page and a refund post does nothing', async () => {
    const anon = new DashClient(t);
    expect((await anon.get('/dashboard/payments')).location).toBe('/dashboard/sign-in');
    expect((await anon.get(P(plain))).location).toBe('/dashboard/sign-in');
    const res = await anon.send('POST', `${P(plain)}/refunds`, { amount: '1.00' });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/sign-in');
    expect(await refundRows(plain)).toEqual([]);
  });
});

describe('refunds from the page of a payment', () => {
  it('when part is refunded, then the rest with the amount left empty, then both refunds are recorded as the API would and settle through the jobs', async () => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1999 });
    const first = await c.post(`${P(paymentId)}/refunds`, { amount: '5.00', reason: 'requested_by_customer' });
    expect(first.status).toBe(303);
    expect(first.location).toBe(`${P(paymentId)}?done=refund_pending`);
    const notice = await c.get(first.location!);
    // Pending until the refunds job records the processor's answer (within about a second).
    expect(notice.html).toMatch(/Refund created. It is pending until the card processor confirms it|Refund made: the card processor has confirmed it./);
    expect(notice.html).toMatch(/id="amount" name="amount"[^>]*value="14.99"/); // what is left, prefilled
    let rows = await refundRows(paymentId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ amount_cents: 500, reason: 'requested_by_customer', currency: 'usd', account_id: a.accountId, livemode: false });

    const rest = await c.post(`${P(paymentId)}/refunds`, { amount: '', reason: '' });
    expect(rest.status).toBe(303);
    rows = await refundRows(paymentId);
    expect(rows.map((r) => [r.amount_cents, r.reason])).toEqual([
      [500, 'requested_by_customer'],
      [1499, null],
    ]);
    for (const r of rows) expect((await eventsFor(t, r.id))[0]).toBe('refund.created');

    // The refunds job asks the processor again and records its answer.
    await eventually(async () => (await paymentRow(paymentId)).amount_refunded_cents === 1999, 15_000);
    expect((await refundRows(paymentId)).map((r) => r.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(await eventsFor(t, paymentId)).toEqual(['payment.succeeded', 'payment.refunded', 'payment.refunded']);
    const page = await c.get(`${P(paymentId)}?done=refund_pending`); // the redirect's page, reloaded once settled
    expect(page.html).toContain('Refund made: the card processor has confirmed it.');
    expect(page.html).not.toContain('It is pending');
    expect(page.html).toContain('<span class="badge">REFUNDED</span>');
    expect(page.html).toContain('Nothing is left to refund.');
    expect(page.html).not.toContain(`action="${P(paymentId)}/refunds"`);
    expect((await c.get('/dashboard/payments')).html).toContain('<span class="badge">REFUNDED</span>');
  });

  it('when a part is refunded and settled, then the list and the page show it partly refunded', async () => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1000 });
    expect((await c.post(`${P(paymentId)}/refunds`, { amount: '2.50' })).status).toBe(303);
    await eventually(async () => (await paymentRow(paymentId)).amount_refunded_cents === 250, 15_000);
    const page = await c.get(P(paymentId));
    expect(page.html).toContain('<span class="badge warn">PARTLY REFUNDED</span>');
    expect(page.html).toMatch(/<dt>Refunded<\/dt><dd>\$2.50<\/dd>/);
  });

  it('when the processor refuses a refund, then the page says so with its reason and the whole amount can be refunded again', async () => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1999, card: CARDS.refundFails });
    const res = await c.post(`${P(paymentId)}/refunds`, { amount: '' });
    expect(res.status).toBe(303);
    await eventually(async () => (await refundRows(paymentId))[0]?.status === 'FAILED', 15_000);
    const page = await c.get(res.location!);
    expect(page.html).toContain('<div class="alert error" role="alert">The card processor refused the refund');
    expect(page.html).toContain('Failed: <span class="mono">declined</span>');
    expect(page.html).toMatch(/id="amount" name="amount"[^>]*value="19.99"/);
    expect((await paymentRow(paymentId)).amount_refunded_cents).toBe(0);
  });

  it.each([
    ['more than the payment', '20.00', 'amount', 'is more than the 1999 ($19.99) left to refund'],
    ['zero', '0', 'amount', 'must be a positive integer'],
    ['with a thousands separator', '1,000', 'amount', 'Enter the amount in USD'],
    ['with three decimals', '1.005', 'amount', 'Enter the amount in USD'],
  ])('when the amount is %s, then 400 with the API’s error beside the amount, and no refund', async (_name, amount, param, message) => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1999 });
    const res = await c.post(`${P(paymentId)}/refunds`, { amount, reason: '' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(new RegExp(`id="${param}" name="${param}"[^>]*aria-invalid="true"`));
    expect(res.html).toMatch(new RegExp(`<p class="field-error" id="${param}-error">[^<]*${message.replace(/[()$]/g, '\\$&')}`));
    expect(res.html).toContain(`value="${amount}"`); // what was typed comes back
    expect(await refundRows(paymentId)).toEqual([]);
  });

  it('when the reason is not one of the API’s, then 400 naming reason and no refund', async () => {
    const res = await c.post(`${P(plain)}/refunds`, { amount: '1.00', reason: 'changed_mind' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/<p class="field-error" id="reason-error">Invalid reason/);
    expect(await refundRows(plain)).toEqual([]);
  });

  it('when the payment failed, then a refund post is refused beside the amount and nothing is written', async () => {
    const res = await c.post(`${P(failed)}/refunds`, { amount: '' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/<p class="field-error" id="amount-error">Payment pay_\w+ is FAILED: only a SUCCEEDED payment can be refunded.<\/p>/);
    expect(await refundRows(failed)).toEqual([]);
  });

  it('when the same form is posted twice (same idempotency key), then one refund and the same answer', async () => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1999 });
    const key = formKey();
    const one = await c.post(`${P(paymentId)}/refunds`, { amount: '3.00', reason: '', idempotency_key: key });
    const two = await c.post(`${P(paymentId)}/refunds`, { amount: '3.00', reason: '', idempotency_key: key });
    expect(one.status).toBe(303);
    expect(two.status).toBe(303);
    expect(two.location).toBe(one.location);
    expect((await refundRows(paymentId)).map((r) => r.amount_cents)).toEqual([300]);
    // The same key with other values is refused, and writes nothing.
    const other = await c.post(`${P(paymentId)}/refunds`, { amount: '4.00', reason: '', idempotency_key: key });
    expect(other.status).toBe(409);
    expect(await refundRows(paymentId)).toHaveLength(1);
  });

  it('when 10 refunds of the whole amount are posted at once, then exactly one is recorded and the rest are refused with a page', async () => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1999 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.post(`${P(paymentId)}/refunds`, { amount: '19.99', reason: '' })));
    expect(answers.filter((x) => x.status === 303)).toHaveLength(1);
    const refused = answers.filter((x) => x.status !== 303);
    expect(refused).toHaveLength(9);
    for (const x of refused) {
      expect(x.status).toBe(400);
      expect(x.html).toContain('left to refund');
      expect(x.html).toContain('<h1>$19.99 USD</h1>');
    }
    const rows = await refundRows(paymentId);
    expect(rows.map((r) => r.amount_cents)).toEqual([1999]);
    expect(await eventsFor(t, rows[0]!.id)).toContain('refund.created');
  });

  it('when a pending refund is cancelled after confirming, then it is CANCELLED as the API would, and cannot be cancelled twice', async () => {
    const { paymentId } = await paidPayment(t, a.test, { amount: 1999 });
    expect((await c.post(`${P(paymentId)}/refunds`, { amount: '9.99' })).status).toBe(303);
    const [refund] = await refundRows(paymentId);
    // A slow processor: the refund stays pending on its side until cancelled.
    await t.sql`update simulator_refunds set settle_at = now() + interval '1 hour' where refund_id = ${refund!.id}`;
    const page = await c.get(P(paymentId));
    expect(page.html).toContain(`href="${P(paymentId)}?confirm=cancel-refund&amp;refund=${refund!.id}"`);
    const confirm = await c.get(`${P(paymentId)}?confirm=cancel-refund&refund=${refund!.id}`);
    expect(confirm.html).toContain('Cancel this refund?');
    expect(confirm.html).toContain(`action="${P(paymentId)}/refunds/${refund!.id}/cancel"`);
    const res = await c.post(`${P(paymentId)}/refunds/${refund!.id}/cancel`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${P(paymentId)}?done=refund_cancelled`);
    expect((await refundRows(paymentId))[0]).toMatchObject({ status: 'CANCELLED' });
    expect(await eventsFor(t, refund!.id)).toEqual(['refund.created', 'refund.updated']);
    const again = await c.post(`${P(paymentId)}/refunds/${refund!.id}/cancel`, {});
    expect(again.status).toBe(400);
    expect(again.html).toContain('only a PENDING refund can be cancelled');
    // A refund of another payment cannot be reached through this one.
    const elsewhere = await c.post(`${P(plain)}/refunds/${refund!.id}/cancel`, {});
    expect(elsewhere.status).toBe(404);
    expect(await eventsFor(t, refund!.id)).toEqual(['refund.created', 'refund.updated']);
  });

  it('when another account’s payment is refunded through this session, then 404 and no refund', async () => {
    const res = await c.post(`${P(otherAccount)}/refunds`, { amount: '' });
    expect(res.status).toBe(404);
    expect(await refundRows(otherAccount)).toEqual([]);
  });

  it('when the CSRF token is missing or wrong, then 403 and no refund', async () => {
    for (const _csrf of ['', 'forged']) {
      const res = await c.post(`${P(plain)}/refunds`, { amount: '1.00', _csrf });
      expect(res.status).toBe(403);
      expect(res.html).toContain('This form has expired');
    }
    expect(await refundRows(plain)).toEqual([]);
  });

  it('when a form opened in test mode is posted after switching to live, then 409 and no refund', async () => {
    const other = await signedIn(t, a.accountId, 'payments-mode@example.com');
    await other.get(P(plain)); // the form, opened in test mode
    await other.post('/dashboard/mode', { mode: 'live', back: '/dashboard/payments' });
    const res = await other.post(`${P(plain)}/refunds`, { amount: '1.00', form_mode: 'test' });
    // The live session does not see the test payment at all: 404 before the form is even read.
    expect(res.status).toBe(404);
    // The live payment, with a form claiming test mode: the mode check refuses it.
    const mismatch = await other.post(`${P(LIVE)}/refunds`, { amount: '1.00', form_mode: 'test' });
    expect(mismatch.status).toBe(409);
    expect(mismatch.html).toContain('The mode has changed');
    expect(await refundRows(plain)).toEqual([]);
    expect(await refundRows(LIVE)).toEqual([]);
  });
});

describe('disputes on the page of a payment', () => {
  let paymentId: string;
  let disputeId: string;
  beforeAll(async () => {
    const d = await disputed(t, a.test, 4200);
    paymentId = d.paymentId;
    disputeId = d.dispute.id;
  });

  it('when a payment is disputed, then the page shows the dispute and its evidence form, and no refund form', async () => {
    const res = await c.get(P(paymentId));
    const h = res.html;
    expect(h).toContain('<span class="badge bad">DISPUTED</span>');
    expect(h).toContain('<span class="badge warn">NEEDS RESPONSE</span>');
    expect(h).toContain('Fraudulent: the cardholder says they did not make this payment');
    expect(h).toContain('<dt>Evidence due by</dt>');
    expect(h).toContain(`action="${P(paymentId)}/disputes/${disputeId}" novalidate`);
    for (const [k, max] of Object.entries(EVIDENCE_FIELDS)) {
      const tag = max > 500 ? 'textarea' : 'input';
      expect(h).toMatch(new RegExp(`<${tag}[^>]* id="${disputeId}-${k}" name="${k}"[^>]* maxlength="${max}"`));
    }
    expect(h).toContain('>Save evidence</button>');
    expect(h).toContain('>Submit evidence</button>');
    expect(h).toContain('This payment is disputed: it cannot be refunded while the dispute stands.');
    expect(h).not.toContain(`action="${P(paymentId)}/refunds"`);
    expect((await c.get('/dashboard/payments')).html).toContain('<span class="badge bad">DISPUTED</span>');
  });

  it('when a refund of the disputed payment is posted anyway, then the API’s error shows beside the amount and no refund is written', async () => {
    const res = await c.post(`${P(paymentId)}/refunds`, { amount: '1.00', reason: '' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/<p class="field-error" id="amount-error">Payment pay_\w+ is disputed: it cannot be refunded while the dispute stands.<\/p>/);
    expect(await refundRows(paymentId)).toEqual([]);
  });

  it('when a field is longer than its bound, then 400 beside that field and nothing is saved', async () => {
    const res = await postEvidence(c, `${P(paymentId)}/disputes/${disputeId}`, evidenceForm({ customer_name: 'x'.repeat(501), product_description: 'A blue mug' }), { intent: 'save' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(new RegExp(`<p class="field-error" id="${disputeId}-customer_name-error">Invalid evidence\\[customer_name\\]: must be at most 500 characters`));
    expect(res.html).toContain('A blue mug'); // what was typed comes back
    expect((await disputeRow(disputeId)).evidence).toEqual({});
    expect(await eventsFor(t, disputeId)).toEqual(['dispute.created']);
  });

  it('when evidence is saved, then the disputes row holds it (a long text with CRLF line breaks counted as one), with dispute.updated, and the form shows it', async () => {
    const long = `${'a'.repeat(9_999)}\r\n${'b'.repeat(10_000)}`; // 20,000 characters once the line break is one
    const res = await postEvidence(c, `${P(paymentId)}/disputes/${disputeId}`, evidenceForm({ customer_name: ' Ada Lovelace ', product_description: 'A blue mug', customer_communication: long }), { intent: 'save' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${P(paymentId)}?done=evidence_saved`);
    const row = await disputeRow(disputeId);
    expect(row.status).toBe('NEEDS_RESPONSE');
    expect(row.evidence).toEqual({ customer_name: 'Ada Lovelace', product_description: 'A blue mug', customer_communication: long.replace('\r\n', '\n') });
    expect(await eventsFor(t, disputeId)).toEqual(['dispute.created', 'dispute.updated']);
    const page = await c.get(res.location!);
    expect(page.html).toContain('Evidence saved. It has not been sent yet');
    expect(page.html).toMatch(new RegExp(`id="${disputeId}-customer_name" name="customer_name"[^>]*value="Ada Lovelace"`));
    expect(page.html).toContain('3 of 18 fields saved');

    // An emptied field clears what was saved; a field not sent at all is left as it is.
    const cleared = await c.post(`${P(paymentId)}/disputes/${disputeId}`, { customer_name: '', intent: 'save' });
    expect(cleared.status).toBe(303);
    expect(Object.keys((await disputeRow(disputeId)).evidence).sort()).toEqual(['customer_communication', 'product_description']);
  });

  it('when the evidence is submitted, then the dispute is UNDER_REVIEW and the form gives way to the evidence sent; a stale form is refused', async () => {
    const res = await postEvidence(c, `${P(paymentId)}/disputes/${disputeId}`, evidenceForm({ product_description: 'A blue mug', uncategorized_text: 'winning_evidence' }), { intent: 'submit' });
    expect(res.status, `${res.html.slice(0, 2000)}\n${serviceErrors.join('\n')}`).toBe(303);
    expect(res.location).toBe(`${P(paymentId)}?done=evidence_submitted`);
    const row = await disputeRow(disputeId);
    expect(row.status).toBe('UNDER_REVIEW');
    expect(row.submitted_at).toBeInstanceOf(Date);
    expect(row.evidence).toEqual({ product_description: 'A blue mug', uncategorized_text: 'winning_evidence' });
    expect(await eventsFor(t, disputeId)).toEqual(['dispute.created', 'dispute.updated', 'dispute.updated', 'dispute.updated']);
    const page = await c.get(P(paymentId));
    expect(page.html).not.toContain(`action="${P(paymentId)}/disputes/${disputeId}"`);
    expect(page.html).toMatch(/<dt>Product description<\/dt><dd><span class="pre">A blue mug<\/span><\/dd>/);

    const stale = await postEvidence(c, `${P(paymentId)}/disputes/${disputeId}`, evidenceForm({ product_description: 'Changed' }), { intent: 'save' });
    expect(stale.status).toBe(400);
    expect(stale.html).toContain('it can only be changed while NEEDS_RESPONSE');
    expect((await disputeRow(disputeId)).evidence).toEqual(row.evidence);

    // The decision job asks the processor later: "winning_evidence" wins.
    await eventually(async () => (await disputeRow(disputeId)).status === 'WON', 15_000);
    expect((await c.get(P(paymentId))).html).toContain('<span class="badge good">WON</span>');
  });

  it('when a dispute is accepted after confirming, then it is LOST with dispute.closed', async () => {
    const d = await disputed(t, a.test, 1500);
    const confirm = await c.get(`${P(d.paymentId)}?confirm=accept-dispute&dispute=${d.dispute.id}`);
    expect(confirm.html).toContain('Accept this dispute?');
    const res = await c.post(`${P(d.paymentId)}/disputes/${d.dispute.id}/close`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${P(d.paymentId)}?done=dispute_accepted`);
    expect(await disputeRow(d.dispute.id)).toMatchObject({ status: 'LOST' });
    expect(await eventsFor(t, d.dispute.id)).toEqual(['dispute.created', 'dispute.closed']);
    const again = await c.post(`${P(d.paymentId)}/disputes/${d.dispute.id}/close`, {});
    expect(again.status).toBe(400);
    expect(again.html).toContain('it can only be changed while NEEDS_RESPONSE');
  });

  it('when a dispute is reached through another payment, another account or without the CSRF token, then nothing changes', async () => {
    const d = await disputed(t, a.test, 1600);
    const path = `${P(d.paymentId)}/disputes/${d.dispute.id}`;
    expect((await postEvidence(c, `${P(plain)}/disputes/${d.dispute.id}`, evidenceForm({ customer_name: 'X' }), { intent: 'save' })).status).toBe(404);
    expect((await c.post(`${P(plain)}/disputes/${d.dispute.id}/close`, {})).status).toBe(404);
    const intruder = await signedIn(t, b.accountId, 'payments-b@example.com');
    expect((await postEvidence(intruder, path, evidenceForm({ customer_name: 'X' }), { intent: 'submit' })).status).toBe(404);
    expect((await intruder.post(`${path}/close`, {})).status).toBe(404);
    expect((await postEvidence(c, path, evidenceForm({ customer_name: 'X' }), { intent: 'submit', _csrf: 'forged' })).status).toBe(403);
    expect((await c.post(`${path}/close`, { _csrf: '' })).status).toBe(403);
    expect(await disputeRow(d.dispute.id)).toMatchObject({ status: 'NEEDS_RESPONSE', evidence: {} });
    expect(await eventsFor(t, d.dispute.id)).toEqual(['dispute.created']);
  });

  it('when the evidence form is larger than the bound (1 MB), then 413 and nothing is saved', async () => {
    const d = await disputed(t, a.test, 1700);
    const res = await postEvidence(c, `${P(d.paymentId)}/disputes/${d.dispute.id}`, evidenceForm({ uncategorized_text: 'x'.repeat(1_100_000) }), { intent: 'save' });
    expect(res.status).toBe(413);
    expect((await disputeRow(d.dispute.id)).evidence).toEqual({});
  });
});
