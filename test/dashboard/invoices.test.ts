import { beforeAll, describe, expect, it } from 'vitest';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { useTestServer } from '../helpers/server.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { payInvoice } from '../helpers/payer.ts';

const t = useTestServer();
let a: { accountId: string; test: string; live: string };
let b: { accountId: string; test: string; live: string };
let c: DashClient;
let customerId: string;

const customer = async (key: string, email = 'ada@example.com') => {
  const res = await t.request('POST', '/v1/customers', { key, body: { email, first_name: 'Ada', last_name: 'Lovelace' } });
  if (res.status !== 200) throw new Error(`customer: ${res.status}`);
  return res.body.id as string;
};
const apiInvoice = async (key: string, body: Record<string, unknown>) => {
  const res = await t.request('POST', '/v1/invoices', { key, body: { currency: 'usd', line_items: [{ name: 'Tea', quantity: 1, amount: 1000 }], ...body } });
  if (res.status !== 200) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const getInvoice = async (id: string, key = a.test) => (await t.request('GET', `/v1/invoices/${id}`, { key })).body;
const count = async (accountId: string) => Number((await t.sql`select count(*) from invoices where account_id = ${accountId}`)[0]!.count);
const events = async (accountId: string) => Number((await t.sql`select count(*) from events where account_id = ${accountId}`)[0]!.count);
const idOf = (location: string | null) => /\/dashboard\/invoices\/(in_[0-9a-z]+)\?/.exec(location ?? '')![1]!;

/** The create form as a merchant fills it: two lines (Oolong 2 × 12.00, Delivery 5.00), partial payments from 5.00. */
const NEW_FORM = () => ({
  customer_id: customerId,
  currency: 'usd',
  description: 'March order',
  due_date: '2031-03-31T18:00',
  allow_partial_payments: 'on',
  minimum_payment_cents: '5.00',
  metadata: 'order=1042',
  'line_items[0][name]': 'Oolong tea, 250 g',
  'line_items[0][quantity]': '2',
  'line_items[0][amount]': '12.00',
  'line_items[1][name]': 'Delivery',
  'line_items[1][quantity]': '',
  'line_items[1][amount]': '5',
  'line_items[2][name]': '',
  'line_items[2][quantity]': '',
  'line_items[2][amount]': '',
});

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  customerId = await customer(a.test);
  c = await signedIn(t, a.accountId, 'owner@invoices.example');
});

describe('the invoice list', () => {
  it('when invoices exist, then the list shows them newest first with number, customer, amounts and status, filters by status and customer, and pages with cursors', async () => {
    const acct = await t.account();
    const d = await signedIn(t, acct.accountId, 'pager@invoices.example');
    const ada = await customer(acct.test, 'ada@list.example');
    const grace = await customer(acct.test, 'grace@list.example');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await apiInvoice(acct.test, { customer_id: i % 3 === 0 ? grace : ada, line_items: [{ name: 'Tea', quantity: 1, amount: 1000 + i }] })).id);
    const opened = await t.request('POST', `/v1/invoices/${ids[11]}/finalize`, { key: acct.test });
    expect(opened.body.number).toBe('INV-0001');

    const first = await d.get('/dashboard/invoices');
    expect(first.status).toBe(200);
    const shown = (html: string) => [...html.matchAll(/href="\/dashboard\/invoices\/(in_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(shown(first.html)).toEqual(ids.slice(2).reverse());
    expect(first.html).toContain('INV-0001');
    expect(first.html).toContain('>Draft<');
    expect(first.html).toContain('grace@list.example');
    expect(first.html).toContain('$10.11'); // total and amount due of the newest
    expect(first.html).toMatch(/class="badge info">OPEN</);
    const older = /href="([^"]+starting_after=[^"]+)"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    const second = await d.get(older);
    expect(shown(second.html)).toEqual(ids.slice(0, 2).reverse());
    expect(second.html).toContain('← Newer');

    expect(shown((await d.get('/dashboard/invoices?status=OPEN')).html)).toEqual([ids[11]]);
    // "Any" status sends an empty value: no filter.
    expect(shown((await d.get(`/dashboard/invoices?status=&customer_id=${grace}`)).html)).toEqual([ids[9], ids[6], ids[3], ids[0]]);
    expect(shown((await d.get(`/dashboard/invoices?status=DRAFT&customer_id=${grace}`)).html)).toEqual([ids[9], ids[6], ids[3], ids[0]]);
    // A bad filter or cursor is the API's 400, as a page naming it.
    const bad = await d.get('/dashboard/invoices?status=LATE');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('status');
    expect((await d.get('/dashboard/invoices?starting_after=nope')).status).toBe(400);
  });
});

describe('an invoice from draft to paid', () => {
  it('when a draft is created with two lines, then the API finds every field, invoice.created fires once, and its page shows the lines', async () => {
    const before = await count(a.accountId);
    expect((await c.get('/dashboard/invoices/new')).html).toContain(`<option value="${customerId}">ada@example.com (Ada Lovelace)</option>`);
    const res = await c.post('/dashboard/invoices', NEW_FORM());
    expect(res.status, res.html).toBe(303);
    const id = idOf(res.location);
    expect(await count(a.accountId)).toBe(before + 1);
    expect(await getInvoice(id)).toMatchObject({
      status: 'DRAFT',
      number: null,
      customer_id: customerId,
      currency: 'usd',
      description: 'March order',
      due_date: Date.UTC(2031, 2, 31, 18, 0) / 1000,
      allow_partial_payments: true,
      minimum_payment_cents: 500,
      metadata: { order: '1042' },
      line_items: [
        { name: 'Oolong tea, 250 g', quantity: 2, amount: 1200 },
        { name: 'Delivery', quantity: 1, amount: 500 },
      ],
      total_cents: 2900,
      hosted_invoice_url: null,
    });
    // The event is the API's: its object is the invoice as GET /v1/invoices/:id presents it.
    expect(await eventObjects(t, id)).toEqual([{ type: 'invoice.created', object: await getInvoice(id) }]);
    const page = await c.get(res.location!);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Draft created.');
    expect(page.html).toContain('Oolong tea, 250 g');
    expect(page.html).toContain('$24.00');
    expect(page.html).toContain('$29.00');
    expect(page.html).toContain(`href="/dashboard/customers/${customerId}"`);
    expect(page.html).toContain('go live when the invoice is sent');
    expect(page.html).not.toContain('data-hosted-url');
  });

  it('when a draft is finalized, sent, partly paid on its hosted page, then the page follows each step; void is refused once paid; uncollectible stops reminders', async () => {
    const id = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);

    await c.get(`/dashboard/invoices/${id}`);
    const fin = await c.post(`/dashboard/invoices/${id}/finalize`, {});
    expect(fin.location).toBe(`/dashboard/invoices/${id}?done=finalized`);
    const finalized = await getInvoice(id);
    expect(finalized).toMatchObject({ status: 'OPEN', number: expect.stringMatching(/^INV-\d{4}$/), sent_at: null });
    expect(await eventsFor(t, id)).toEqual(['invoice.created', 'invoice.finalized']);

    const page = await c.get(fin.location!);
    expect(page.html).toContain(`<h1>${finalized.number}</h1>`);
    const sent = await c.post(`/dashboard/invoices/${id}/send`, {});
    expect(sent.location).toBe(`/dashboard/invoices/${id}?done=sent`);
    const emails = await t.sql`select to_address, template, related_object from emails where related_object = ${id}`;
    expect(emails).toEqual([{ to_address: 'ada@example.com', template: 'invoice', related_object: id }]);
    expect(await eventsFor(t, id)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent']);
    const inv = await getInvoice(id);
    expect(inv.hosted_invoice_url).toMatch(/^http/);

    const sentPage = await c.get(sent.location!);
    expect(sentPage.html).toContain('Invoice emailed to the customer.');
    expect(sentPage.html).toContain(`data-copy="${inv.hosted_invoice_url}"`);
    expect(sentPage.html).toContain(`href="${inv.invoice_pdf}"`);
    expect(sentPage.html).toMatch(/<td>Invoice<\/td><td>ada@example\.com<\/td>/);
    // Sent again: a second email, invoice.sent stays once.
    expect((await c.post(`/dashboard/invoices/${id}/send`, {})).status).toBe(303);
    expect((await t.sql`select count(*)::int as n from emails where related_object = ${id}`)[0]!.n).toBe(2);
    expect((await eventsFor(t, id)).filter((e) => e === 'invoice.sent')).toHaveLength(1);

    // The customer pays 10.00 of 29.00 on the hosted page: the dashboard shows 19.00 due and the payment.
    expect((await payInvoice(t, inv.hosted_invoice_url, '10.00')).paid.status).toBe(303);
    const paidPage = await c.get(`/dashboard/invoices/${id}`);
    expect(paidPage.html).toContain('<strong data-amount-due>$19.00</strong>');
    const [payment] = await t.sql<{ id: string }[]>`select id from payments where invoice_id = ${id} and status = 'SUCCEEDED'`;
    expect(paidPage.html).toContain(`href="/dashboard/payments/${payment!.id}"`);

    // Void is refused with the API's message, and nothing changes.
    const eventsBefore = await events(a.accountId);
    const confirm = await c.get(`/dashboard/invoices/${id}?confirm=void`);
    expect(confirm.html).toContain(`Void ${inv.number}?`);
    const voided = await c.post(`/dashboard/invoices/${id}/void`, {});
    expect(voided.status).toBe(400);
    expect(voided.html).toContain(`Invoice ${id} is partly paid (1000 of 2900): it cannot be voided; mark it uncollectible instead.`);
    expect((await getInvoice(id)).status).toBe('OPEN');
    expect(await events(a.accountId)).toBe(eventsBefore);

    const unc = await c.post(`/dashboard/invoices/${id}/mark-uncollectible`, {});
    expect(unc.location).toBe(`/dashboard/invoices/${id}?done=uncollectible`);
    expect(await getInvoice(id)).toMatchObject({ status: 'UNCOLLECTIBLE', reminders: { next_at: null }, amount_due_cents: 1900 });
    expect((await eventsFor(t, id)).at(-1)).toBe('invoice.marked_uncollectible');
    // Refused transitions answer the API's message on the page.
    const again = await c.post(`/dashboard/invoices/${id}/mark-uncollectible`, {});
    expect(again.status).toBe(400);
    expect(again.html).toContain(`Invoice ${id} is UNCOLLECTIBLE: only OPEN invoices can be marked uncollectible.`);
  });

  it('when an unpaid invoice is voided after confirming, then it is VOID with invoice.voided; a second form is refused with the API message', async () => {
    const id = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);
    await c.post(`/dashboard/invoices/${id}/finalize`, {});
    await c.get(`/dashboard/invoices/${id}?confirm=void`);
    const key = formKey();
    const res = await c.post(`/dashboard/invoices/${id}/void`, { idempotency_key: key });
    expect(res.location).toBe(`/dashboard/invoices/${id}?done=voided`);
    expect((await getInvoice(id)).status).toBe('VOID');
    // A double click replays the answer; a new form is the API's refusal.
    expect((await c.post(`/dashboard/invoices/${id}/void`, { idempotency_key: key })).location).toBe(res.location);
    const refused = await c.post(`/dashboard/invoices/${id}/void`, {});
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(`Invoice ${id} is VOID: only OPEN or UNCOLLECTIBLE invoices can be voided.`);
    expect((await eventsFor(t, id)).filter((e) => e === 'invoice.voided')).toHaveLength(1);
  });

  it('when a draft is sent directly, then it is finalized and emailed in one step', async () => {
    const id = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);
    await c.get(`/dashboard/invoices/${id}`);
    expect((await c.post(`/dashboard/invoices/${id}/send`, {})).location).toBe(`/dashboard/invoices/${id}?done=sent`);
    expect(await eventsFor(t, id)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent']);
    expect(await t.sql`select template from emails where related_object = ${id}`).toEqual([{ template: 'invoice' }]);
  });

  it('when an empty draft is finalized, then the API refusal is shown and it stays a DRAFT without a number', async () => {
    const { id } = await apiInvoice(a.test, { customer_id: customerId, line_items: [] });
    await c.get(`/dashboard/invoices/${id}`);
    const res = await c.post(`/dashboard/invoices/${id}/finalize`, {});
    expect(res.status).toBe(400);
    expect(res.html).toContain('An invoice needs at least one line item to be finalized.');
    expect(await getInvoice(id)).toMatchObject({ status: 'DRAFT', number: null });
  });

  it('when delete is confirmed, then only a draft is deleted (invoice.deleted); a finalized invoice is refused and stays', async () => {
    const draft = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);
    const confirm = await c.get(`/dashboard/invoices/${draft}?confirm=delete`);
    expect(confirm.html).toContain('Delete this draft?');
    const key = formKey();
    const res = await c.post(`/dashboard/invoices/${draft}/delete`, { idempotency_key: key });
    expect(res.location).toBe('/dashboard/invoices?done=deleted');
    expect((await t.request('GET', `/v1/invoices/${draft}`, { key: a.test })).status).toBe(404);
    expect(await eventsFor(t, draft)).toEqual(['invoice.created', 'invoice.deleted']);
    expect((await c.post(`/dashboard/invoices/${draft}/delete`, { idempotency_key: key })).location).toBe(res.location);
    expect((await c.post(`/dashboard/invoices/${draft}/delete`, {})).status).toBe(404);

    const open = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);
    await c.post(`/dashboard/invoices/${open}/finalize`, {});
    const page = await c.get(`/dashboard/invoices/${open}`);
    expect(page.html).not.toContain('?confirm=delete');
    const refused = await c.post(`/dashboard/invoices/${open}/delete`, {});
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(`Invoice ${open} is OPEN: only DRAFT invoices can be deleted.`);
    expect((await getInvoice(open)).status).toBe('OPEN');
  });
});

describe('the draft forms', () => {
  it("when line 2's amount is wrong, then the form comes back with the problem beside that row, what was typed, and nothing written", async () => {
    const before = [await count(a.accountId), await events(a.accountId)];
    await c.get('/dashboard/invoices/new');
    const res = await c.post('/dashboard/invoices', { ...NEW_FORM(), 'line_items[1][amount]': '5.005' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/id="line-1-amount"[^>]*aria-invalid="true"/);
    expect(res.html).not.toMatch(/id="line-0-amount"[^>]*aria-invalid/);
    expect(res.html).toMatch(/id="line-1-amount-error">Enter the amount in USD with at most 2 decimal places, like 12.50.</);
    expect(res.html).toContain('value="Oolong tea, 250 g"');
    expect(res.html).toContain('value="5.005"');
    // The API's own check of a line, named on the row it came from (row 2 left empty: the API's line 1 is row 3).
    const skipped = await c.post('/dashboard/invoices', {
      ...NEW_FORM(),
      'line_items[1][name]': '',
      'line_items[1][amount]': '',
      'line_items[2][name]': 'Gift wrap',
      'line_items[2][quantity]': '0',
      'line_items[2][amount]': '1.00',
    });
    expect(skipped.status).toBe(400);
    expect(skipped.html).toMatch(/id="line-2-quantity"[^>]*aria-invalid="true"/);
    expect(skipped.html).toContain('Invalid line_items[2][quantity]: must be a positive integer');
    // A customer that is not the account's is named beside the field.
    const other = await c.post('/dashboard/invoices', { ...NEW_FORM(), customer_id: await customer(b.test) });
    expect(other.status).toBe(400);
    expect(other.html).toMatch(/id="customer_id"[^>]*aria-invalid="true"/);
    const tooBig = await c.post('/dashboard/invoices', { ...NEW_FORM(), 'line_items[0][amount]': '600000.00' });
    expect(tooBig.status).toBe(400);
    expect(tooBig.html).toContain('id="line-items-error"');
    expect([await count(a.accountId), await events(a.accountId)]).toEqual(before);
  });

  it('when the create form is submitted twice with its idempotency key, then one invoice is created', async () => {
    const before = await count(a.accountId);
    await c.get('/dashboard/invoices/new');
    const key = formKey();
    const first = await c.post('/dashboard/invoices', { ...NEW_FORM(), idempotency_key: key });
    const second = await c.post('/dashboard/invoices', { ...NEW_FORM(), idempotency_key: key });
    expect(first.status).toBe(303);
    expect(second.location).toBe(first.location);
    expect(await count(a.accountId)).toBe(before + 1);
    const other = await c.post('/dashboard/invoices', { ...NEW_FORM(), description: 'Another', idempotency_key: key });
    expect(other.status).toBe(409);
    expect(await count(a.accountId)).toBe(before + 1);
  });

  it("when a draft's details are edited, then cleared fields become null, metadata lines removed are removed, and invoice.updated fires", async () => {
    const id = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);
    const grace = await customer(a.test, 'grace@example.com');
    const edit = await c.get(`/dashboard/invoices/${id}/edit`);
    expect(edit.status).toBe(200);
    expect(edit.html).toContain('value="2031-03-31T18:00"');
    expect(edit.html).toContain('value="12.00"');
    const res = await c.post(`/dashboard/invoices/${id}`, {
      customer_id: grace,
      currency: 'EUR',
      description: '',
      due_date: '',
      minimum_payment_cents: '',
      metadata: 'po=77',
    });
    expect(res.location).toBe(`/dashboard/invoices/${id}?done=updated`);
    expect(await getInvoice(id)).toMatchObject({
      customer_id: grace,
      currency: 'eur',
      description: null,
      due_date: null,
      allow_partial_payments: false,
      minimum_payment_cents: null,
      metadata: { po: '77' },
      total_cents: 2900,
    });
    expect((await eventsFor(t, id)).at(-1)).toBe('invoice.updated');
    // A problem is named beside its field; nothing changes.
    const bad = await c.post(`/dashboard/invoices/${id}`, { customer_id: grace, currency: 'eur', minimum_payment_cents: '3.00' });
    expect(bad.status).toBe(400);
    expect(bad.html).toMatch(/id="minimum_payment_cents"[^>]*aria-invalid="true"/);
    expect((await getInvoice(id)).minimum_payment_cents).toBeNull();
  });

  it("when a draft's lines are edited a window at a time, then the lines of the window are replaced, cleared ones removed, the others kept", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => ({ name: `Item ${i + 1}`, quantity: 1, amount: 100 * (i + 1) }));
    const { id } = await apiInvoice(a.test, { customer_id: customerId, line_items: lines });
    const first = await c.get(`/dashboard/invoices/${id}/edit`);
    expect(first.html).toContain('value="Item 10"');
    expect(first.html).not.toContain('value="Item 11"');
    expect(first.html).toContain(`href="/dashboard/invoices/${id}/edit?from=10#lines"`);
    const page = await c.get(`/dashboard/invoices/${id}/edit?from=10`);
    expect(page.html).toContain('value="Item 12"');
    expect(page.html).toContain('name="line_items[19][amount]"');
    const res = await c.post(`/dashboard/invoices/${id}/lines`, {
      from: '10',
      'line_items[10][name]': 'Item 11, bigger',
      'line_items[10][quantity]': '3',
      'line_items[10][amount]': '11.00',
      'line_items[11][name]': '',
      'line_items[11][quantity]': '',
      'line_items[11][amount]': '',
      'line_items[13][name]': 'Extra',
      'line_items[13][amount]': '0.50',
    });
    expect(res.location).toBe(`/dashboard/invoices/${id}?done=lines`);
    const inv = await getInvoice(id);
    expect(inv.line_items).toEqual([...lines.slice(0, 10), { name: 'Item 11, bigger', quantity: 3, amount: 1100 }, { name: 'Extra', quantity: 1, amount: 50 }]);
    expect(inv.total_cents).toBe(5500 + 3300 + 50);
    // A bad amount in the window is named on its row; nothing changes.
    const bad = await c.post(`/dashboard/invoices/${id}/lines`, { from: '10', 'line_items[10][name]': 'X', 'line_items[10][amount]': '1', 'line_items[12][name]': 'Y', 'line_items[12][amount]': '-1' });
    expect(bad.status).toBe(400);
    expect(bad.html).toMatch(/id="line-12-amount"[^>]*aria-invalid="true"/);
    expect((await getInvoice(id)).line_items).toEqual(inv.line_items);
  });

  it('when the invoice is no longer a draft, then its edit page and forms answer the API refusal and nothing changes', async () => {
    const id = idOf((await c.post('/dashboard/invoices', NEW_FORM())).location);
    await c.post(`/dashboard/invoices/${id}/finalize`, {});
    const edit = await c.get(`/dashboard/invoices/${id}/edit`);
    expect(edit.status).toBe(400);
    expect(edit.html).toContain(`Invoice ${id} is OPEN: only DRAFT invoices can be edited.`);
    const res = await c.post(`/dashboard/invoices/${id}/lines`, { from: '0', 'line_items[0][name]': 'Changed', 'line_items[0][amount]': '1' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('only DRAFT invoices can be edited');
    expect((await getInvoice(id)).line_items[0].name).toBe('Oolong tea, 250 g');
  });
});

describe('invoices: access control', () => {
  it("when an invoice of another account or of live mode is named, then 404 and nothing changes", async () => {
    const theirs = await apiInvoice(b.test, { customer_id: await customer(b.test) });
    const live = await apiInvoice(a.live, { customer_id: await customer(a.live) });
    for (const inv of [theirs, live]) {
      expect((await c.get(`/dashboard/invoices/${inv.id}`)).status).toBe(404);
      expect((await c.get(`/dashboard/invoices/${inv.id}/edit`)).status).toBe(404);
      await c.get('/dashboard/invoices');
      for (const action of ['finalize', 'send', 'void', 'mark-uncollectible', 'delete']) {
        expect((await c.post(`/dashboard/invoices/${inv.id}/${action}`, {})).status).toBe(404);
      }
      expect((await c.post(`/dashboard/invoices/${inv.id}`, { customer_id: customerId, currency: 'usd' })).status).toBe(404);
      expect((await c.post(`/dashboard/invoices/${inv.id}/lines`, { from: '0', 'line_items[0][name]': 'X', 'line_items[0][amount]': '1' })).status).toBe(404);
    }
    expect(await getInvoice(theirs.id, b.test)).toEqual(theirs);
    expect(await getInvoice(live.id, a.live)).toEqual(live);
    expect((await c.get('/dashboard/invoices/in_nope')).status).toBe(404);
    const list = await c.get('/dashboard/invoices');
    expect(list.html).not.toContain(theirs.id);
    expect(list.html).not.toContain(live.id);
  });

  it('when there is no session, the CSRF token is wrong or missing, or the form was opened in the other mode, then nothing changes', async () => {
    const { id } = await apiInvoice(a.test, { customer_id: customerId });
    const before = await count(a.accountId);
    const anon = new DashClient(t);
    expect((await anon.get('/dashboard/invoices')).location).toBe('/dashboard/sign-in');
    expect((await anon.get(`/dashboard/invoices/${id}`)).location).toBe('/dashboard/sign-in');
    expect((await anon.post(`/dashboard/invoices/${id}/finalize`, {})).location).toBe('/dashboard/sign-in');
    await c.get(`/dashboard/invoices/${id}`);
    expect((await c.post(`/dashboard/invoices/${id}/finalize`, { _csrf: 'forged' })).status).toBe(403);
    expect((await c.send('POST', `/dashboard/invoices/${id}/finalize`, { form_mode: 'test', idempotency_key: formKey() })).status).toBe(403);
    expect((await c.post('/dashboard/invoices', { ...NEW_FORM(), _csrf: 'forged' })).status).toBe(403);
    // Opened in test, posted after switching to live in another tab.
    const d = await signedIn(t, a.accountId, 'modes@invoices.example');
    await d.get(`/dashboard/invoices/${id}`);
    const token = d.token;
    await d.post('/dashboard/mode', { mode: 'live', back: '/dashboard/invoices' });
    const res = await d.send('POST', '/dashboard/invoices', { _csrf: token, form_mode: 'test', idempotency_key: formKey(), ...NEW_FORM() });
    expect(res.status).toBe(409);
    expect(res.html).toContain('This form was opened while viewing test data');
    expect((await d.send('POST', `/dashboard/invoices/${id}/finalize`, { _csrf: token, form_mode: 'test', idempotency_key: formKey() })).status).toBe(409);
    expect(await getInvoice(id)).toMatchObject({ status: 'DRAFT', number: null });
    expect(await count(a.accountId)).toBe(before);
  });
});
