import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';

const t = useTestServer();
let key: string;
let live: string;
let accountId: string;
let customerId: string;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  live = a.live;
  accountId = a.accountId;
  customerId = await customer(t, key);
});

const ITEMS = [
  { name: 'Oolong tea, 250 g', quantity: 2, amount: 1200 },
  { name: 'Delivery', quantity: 1, amount: 500 },
];

async function customer(server: TestServer, k: string, email = 'ada@example.com'): Promise<string> {
  const res = await server.request('POST', '/v1/customers', { key: k, body: { email, first_name: 'Ada' } });
  if (res.status !== 200) throw new Error(`customer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const create = (body: Record<string, unknown>, k = key) =>
  t.request('POST', '/v1/invoices', { key: k, body: { customer_id: customerId, currency: 'usd', line_items: ITEMS, ...body } });
const post = (id: string, action: string, k = key, body?: unknown) => t.request('POST', `/v1/invoices/${id}/${action}`, { key: k, body });
const patch = (id: string, body: Record<string, unknown>, k = key) => t.request('PATCH', `/v1/invoices/${id}`, { key: k, body });
const get = (id: string, k = key) => t.request('GET', `/v1/invoices/${id}`, { key: k });

async function draft(body: Record<string, unknown> = {}, k = key): Promise<any> {
  const res = await create(body, k);
  if (res.status !== 200) throw new Error(`create invoice: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function open(body: Record<string, unknown> = {}, k = key): Promise<any> {
  const inv = await draft(body, k);
  const res = await post(inv.id, 'finalize', k);
  if (res.status !== 200) throw new Error(`finalize: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const expectError = (res: { status: number; body: any }, status: number, code: string, param?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (param !== undefined) expect(res.body.error.param).toBe(param);
};

describe('POST /v1/invoices', () => {
  it('when created, then it is a DRAFT with its total, no number, no hosted URL, an unguessable token, and invoice.created', async () => {
    const due = Math.floor(Date.now() / 1000) + 7 * 86400;
    const res = await create({ description: 'March order', due_date: due, metadata: { order: '1042', empty: '' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^in_/),
      object: 'invoice',
      livemode: false,
      customer_id: customerId,
      number: null,
      status: 'DRAFT',
      currency: 'usd',
      line_items: ITEMS,
      total_cents: 2900,
      amount_paid_cents: 0,
      amount_due_cents: 2900,
      description: 'March order',
      due_date: due,
      allow_partial_payments: false,
      minimum_payment_cents: null,
      allow_installments: false,
      installment_options: [{ count: 3, interval: 'month' }],
      hosted_invoice_url: null,
      invoice_pdf: null,
      finalized_at: null,
      sent_at: null,
      paid_at: null,
      voided_at: null,
      marked_uncollectible_at: null,
      reminders: { count: 0, last_sent_at: null, next_at: null },
      metadata: { order: '1042' },
      created: expect.any(Number),
      updated: expect.any(Number),
    });
    const [row] = await t.sql<{ hosted_token: string; account_id: string }[]>`select hosted_token, account_id from invoices where id = ${res.body.id}`;
    expect(row!.account_id).toBe(accountId);
    expect(row!.hosted_token).toMatch(/^[A-Za-z0-9_-]{32}$/); // 24 random bytes
    const events = await eventObjects(t, res.body.id);
    expect(events.map((e) => e.type)).toEqual(['invoice.created']);
    expect(events[0]!.object).toEqual(res.body);
  });

  it('when created with no line items, partial payments and a minimum, or a due date in the past, then it is accepted', async () => {
    const empty = await create({ line_items: undefined });
    expect(empty.body).toMatchObject({ status: 'DRAFT', line_items: [], total_cents: 0, amount_due_cents: 0 });
    const partial = await create({ allow_partial_payments: true, minimum_payment_cents: 500 });
    expect(partial.body).toMatchObject({ allow_partial_payments: true, minimum_payment_cents: 500 });
    const overdue = await create({ due_date: 1_600_000_000 });
    expect(overdue.body.due_date).toBe(1_600_000_000);
  });

  it('when a parameter is wrong, then 400 names it and nothing is written', async () => {
    const before = (await t.sql`select count(*)::int as n from invoices`)[0]!.n;
    expectError(await create({ currency: 'dollars' }), 400, 'parameter_invalid', 'currency');
    expectError(await create({ currency: 'USD' }), 400, 'parameter_invalid', 'currency');
    expectError(await create({ line_items: [{ name: 'Tea', quantity: 1, amount: -5 }] }), 400, 'parameter_invalid', 'line_items[0][amount]');
    expectError(await create({ line_items: [{ name: 'Tea', quantity: 0, amount: 5 }] }), 400, 'parameter_invalid', 'line_items[0][quantity]');
    expectError(await create({ line_items: [{ name: '', quantity: 1, amount: 5 }] }), 400, 'parameter_invalid', 'line_items[0][name]');
    expectError(await create({ line_items: [{ name: 'Tea', quantity: 1, amount: 5, tax: 1 }] }), 400, 'parameter_unknown', 'line_items[0][tax]');
    expectError(await create({ line_items: Array.from({ length: 101 }, () => ({ name: 'x', quantity: 1, amount: 1 })) }), 400, 'parameter_invalid', 'line_items');
    expectError(await create({ line_items: [{ name: 'Gold', quantity: 2, amount: 60_000_000 }] }), 400, 'parameter_invalid', 'line_items');
    expectError(await create({ amount_cents: 100 }), 400, 'parameter_unknown', 'amount_cents');
    expectError(await create({ status: 'OPEN' }), 400, 'parameter_unknown', 'status');
    expectError(await create({ customer_id: undefined }), 400, 'parameter_missing', 'customer_id');
    expectError(await create({ currency: undefined }), 400, 'parameter_missing', 'currency');
    expectError(await create({ due_date: '2030-01-01' }), 400, 'parameter_invalid', 'due_date');
    expectError(await create({ due_date: 1.5 }), 400, 'parameter_invalid', 'due_date');
    expectError(await create({ allow_partial_payments: 'yes' }), 400, 'parameter_invalid', 'allow_partial_payments');
    expectError(await create({ minimum_payment_cents: 500 }), 400, 'parameter_invalid', 'minimum_payment_cents');
    expectError(await create({ allow_partial_payments: true, minimum_payment_cents: 0 }), 400, 'parameter_invalid', 'minimum_payment_cents');
    expectError(await create({ metadata: { ['k'.repeat(41)]: 'v' } }), 400, 'parameter_invalid', 'metadata');
    expectError(await create({ description: 'x'.repeat(1001) }), 400, 'parameter_invalid', 'description');
    expect((await t.sql`select count(*)::int as n from invoices`)[0]!.n).toBe(before);
  });

  it("when customer_id names no customer, another account's, or the other mode's, then 400 naming customer_id", async () => {
    expectError(await create({ customer_id: 'cus_nope' }), 400, 'parameter_invalid', 'customer_id');
    expectError(await create({ customer_id: newId('cus') }), 400, 'parameter_invalid', 'customer_id');
    const other = await t.account();
    expectError(await create({ customer_id: await customer(t, other.test) }), 400, 'parameter_invalid', 'customer_id');
    expectError(await create({ customer_id: await customer(t, live) }), 400, 'parameter_invalid', 'customer_id');
    // The live customer is fine with the live key.
    expect((await create({ customer_id: (await t.request('GET', '/v1/customers', { key: live })).body.data[0].id }, live)).body).toMatchObject({ livemode: true, status: 'DRAFT' });
  });
});

describe('PATCH and DELETE of a DRAFT', () => {
  it('when a DRAFT is edited, then every writable field changes, the total follows the lines, metadata merges, and invoice.updated fires', async () => {
    const inv = await draft({ metadata: { a: '1', b: '2' } });
    const other = await customer(t, key, 'grace@example.com');
    const res = await patch(inv.id, {
      customer_id: other,
      currency: 'eur',
      line_items: [{ name: 'Matcha', quantity: 3, amount: 1000 }],
      description: 'Edited',
      due_date: 2_000_000_000,
      allow_partial_payments: true,
      minimum_payment_cents: 1000,
      metadata: { a: null, c: '3' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      customer_id: other,
      currency: 'eur',
      line_items: [{ name: 'Matcha', quantity: 3, amount: 1000 }],
      total_cents: 3000,
      amount_due_cents: 3000,
      description: 'Edited',
      due_date: 2_000_000_000,
      allow_partial_payments: true,
      minimum_payment_cents: 1000,
      metadata: { b: '2', c: '3' },
      status: 'DRAFT',
    });
    const cleared = await patch(inv.id, { description: null, due_date: null, allow_partial_payments: false, minimum_payment_cents: null });
    expect(cleared.body).toMatchObject({ description: null, due_date: null, allow_partial_payments: false, minimum_payment_cents: null });
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created', 'invoice.updated', 'invoice.updated']);
    expect((await eventObjects(t, inv.id))[2]!.object).toEqual(cleared.body);
  });

  it('when a PATCH is wrong, then 400 naming the parameter and the DRAFT is unchanged', async () => {
    const inv = await draft({ allow_partial_payments: true, minimum_payment_cents: 100 });
    expectError(await patch(inv.id, { status: 'OPEN' }), 400, 'parameter_unknown', 'status');
    expectError(await patch(inv.id, { number: 'INV-9' }), 400, 'parameter_unknown', 'number');
    expectError(await patch(inv.id, { currency: 'xyz' }), 400, 'parameter_invalid', 'currency');
    expectError(await patch(inv.id, { customer_id: 'cus_nope' }), 400, 'parameter_invalid', 'customer_id');
    expectError(await patch(inv.id, { customer_id: null }), 400, 'parameter_invalid', 'customer_id');
    // Turning partial payments off while a minimum is set would leave a meaningless minimum.
    expectError(await patch(inv.id, { allow_partial_payments: false }), 400, 'parameter_invalid', 'minimum_payment_cents');
    expect((await get(inv.id)).body).toEqual(inv);
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created']);
  });

  it('when a DRAFT is deleted, then it answers deleted, is gone, and invoice.deleted carries it as it was', async () => {
    const inv = await draft();
    const res = await t.request('DELETE', `/v1/invoices/${inv.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: inv.id, object: 'invoice', deleted: true });
    expectError(await get(inv.id), 404, 'resource_missing', 'id');
    expectError(await t.request('DELETE', `/v1/invoices/${inv.id}`, { key }), 404, 'resource_missing');
    const events = await eventObjects(t, inv.id);
    expect(events.map((e) => e.type)).toEqual(['invoice.created', 'invoice.deleted']);
    expect(events[1]!.object).toEqual(inv);
  });

  it('when the invoice is not a DRAFT, then PATCH and DELETE are refused with resource_invalid_state naming its status', async () => {
    const inv = await open();
    const edit = await patch(inv.id, { description: 'late change' });
    expectError(edit, 400, 'resource_invalid_state');
    expect(edit.body.error.message).toContain('OPEN');
    const del = await t.request('DELETE', `/v1/invoices/${inv.id}`, { key });
    expectError(del, 400, 'resource_invalid_state');
    expect(del.body.error.message).toContain('OPEN');
    expect((await get(inv.id)).body).toEqual(inv);
  });
});

describe('finalize', () => {
  it('when a DRAFT is finalized, then it is OPEN with a number and finalized_at, and invoice.finalized fires; a second finalize is refused', async () => {
    const inv = await draft();
    const res = await post(inv.id, 'finalize');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'OPEN', number: expect.stringMatching(/^INV-\d{4}$/), finalized_at: expect.any(Number), hosted_invoice_url: null, sent_at: null });
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created', 'invoice.finalized']);
    const again = await post(inv.id, 'finalize');
    expectError(again, 400, 'resource_invalid_state');
    expect(again.body.error.message).toContain('OPEN');
  });

  it('when the DRAFT has no line, a zero total, or a minimum above its total, then finalize is refused naming the parameter, and no number is used', async () => {
    const a = await t.account();
    const cus = await customer(t, a.test);
    const mk = async (body: Record<string, unknown>) =>
      (await t.request('POST', '/v1/invoices', { key: a.test, body: { customer_id: cus, currency: 'usd', ...body } })).body;
    expectError(await post((await mk({})).id, 'finalize', a.test), 400, 'parameter_invalid', 'line_items');
    expectError(await post((await mk({ line_items: [{ name: 'Free sample', quantity: 1, amount: 0 }] })).id, 'finalize', a.test), 400, 'parameter_invalid', 'line_items');
    const min = await mk({ line_items: ITEMS, allow_partial_payments: true, minimum_payment_cents: 5000 });
    expectError(await post(min.id, 'finalize', a.test), 400, 'parameter_invalid', 'minimum_payment_cents');
    expect((await get(min.id, a.test)).body).toMatchObject({ status: 'DRAFT', number: null });
    // The refusals took no number: the first invoice finalized is INV-0001.
    expect((await post((await mk({ line_items: ITEMS })).id, 'finalize', a.test)).body.number).toBe('INV-0001');
  });

  it('when invoices are finalized, then numbers run per account and mode without gaps', async () => {
    const a = await t.account();
    const b = await t.account();
    const cusA = await customer(t, a.test);
    const cusALive = await customer(t, a.live);
    const cusB = await customer(t, b.test);
    const fin = async (k: string, cus: string) => (await open({ customer_id: cus }, k)).number;
    expect(await fin(a.test, cusA)).toBe('INV-0001');
    expect(await fin(a.test, cusA)).toBe('INV-0002');
    expect(await fin(a.live, cusALive)).toBe('INV-0001');
    expect(await fin(b.test, cusB)).toBe('INV-0001');
    // A deleted DRAFT never had a number; the next one follows on.
    const d = await draft({ customer_id: cusA }, a.test);
    await t.request('DELETE', `/v1/invoices/${d.id}`, { key: a.test });
    expect(await fin(a.test, cusA)).toBe('INV-0003');
    expect(await fin(a.live, cusALive)).toBe('INV-0002');
  });

  it('when 20 DRAFTs are finalized at the same moment, then they get INV-0001 to INV-0020, each once', async () => {
    const a = await t.account();
    const cus = await customer(t, a.test);
    const drafts = await Promise.all(Array.from({ length: 20 }, () => draft({ customer_id: cus }, a.test)));
    const results = await Promise.all(drafts.map((d) => post(d.id, 'finalize', a.test)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const numbers = results.map((r) => r.body.number as string).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(4, '0')}`));
    expect(await t.sql`select last_number from invoice_numbers where account_id = ${a.accountId} and livemode = false`).toEqual([{ last_number: 20 }]);
  });

  it('when the counter passes 9999, then the number grows a digit', async () => {
    const a = await t.account();
    const cus = await customer(t, a.test);
    await t.sql`insert into invoice_numbers (account_id, livemode, last_number) values (${a.accountId}, false, 9999)`;
    expect((await open({ customer_id: cus }, a.test)).number).toBe('INV-10000');
  });
});

const emailsOf = (invoiceId: string) =>
  t.sql<{ to_address: string; template: string; dedupe_key: string | null; livemode: boolean; account_id: string }[]>`
    select to_address, template, dedupe_key, livemode, account_id from emails where related_object = ${invoiceId} order by id`;

describe('send', () => {
  it('when a DRAFT is sent, then it is finalized and sent in one step: number, sent_at, hosted URL, an invoice email to the customer, and created/finalized/sent events', async () => {
    const inv = await draft();
    const res = await post(inv.id, 'send');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [row] = await t.sql<{ hosted_token: string }[]>`select hosted_token from invoices where id = ${inv.id}`;
    expect(res.body).toMatchObject({
      status: 'OPEN',
      number: expect.stringMatching(/^INV-/),
      sent_at: expect.any(Number),
      hosted_invoice_url: `${t.url}/invoices/${row!.hosted_token}`,
      invoice_pdf: `${t.url}/invoices/${row!.hosted_token}/pdf`,
    });
    expect(await emailsOf(inv.id)).toEqual([{ to_address: 'ada@example.com', template: 'invoice', dedupe_key: null, livemode: false, account_id: accountId }]);
    const events = await eventObjects(t, inv.id);
    expect(events.map((e) => e.type)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent']);
    expect(events[2]!.object).toEqual(res.body);
  });

  it('when an invoice is sent twice, then the email goes twice, sent_at stays the first, and invoice.sent fires once', async () => {
    const inv = await open();
    const first = await post(inv.id, 'send');
    const second = await post(inv.id, 'send');
    expect(second.status).toBe(200);
    expect(second.body.sent_at).toBe(first.body.sent_at);
    expect(second.body.hosted_invoice_url).toBe(first.body.hosted_invoice_url);
    expect((await emailsOf(inv.id)).map((e) => e.template)).toEqual(['invoice', 'invoice']);
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent']);
  });

  it('when the customer was deleted, then send is refused naming customer_id, and a DRAFT stays a DRAFT without using a number', async () => {
    const a = await t.account();
    const cus = await customer(t, a.test, 'gone@example.com');
    const inv = await draft({ customer_id: cus }, a.test);
    await t.request('DELETE', `/v1/customers/${cus}`, { key: a.test });
    expectError(await post(inv.id, 'send', a.test), 400, 'resource_invalid_state', 'customer_id');
    expect((await get(inv.id, a.test)).body).toMatchObject({ status: 'DRAFT', number: null, sent_at: null });
    expect(await emailsOf(inv.id)).toEqual([]);
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created']);
    const cus2 = await customer(t, a.test);
    expect((await open({ customer_id: cus2 }, a.test)).number).toBe('INV-0001');
  });

  it('when an empty DRAFT is sent, then the finalize refusal answers and nothing is sent', async () => {
    const inv = await draft({ line_items: [] });
    expectError(await post(inv.id, 'send'), 400, 'parameter_invalid', 'line_items');
    expect(await emailsOf(inv.id)).toEqual([]);
  });
});

describe('void and mark-uncollectible', () => {
  it('when an OPEN invoice is voided, then it is VOID with voided_at and invoice.voided, and every later transition is refused', async () => {
    const inv = await open();
    await post(inv.id, 'send');
    const res = await post(inv.id, 'void');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'VOID', voided_at: expect.any(Number), reminders: { next_at: null } });
    for (const action of ['void', 'send', 'finalize', 'mark-uncollectible']) {
      const r = await post(inv.id, action);
      expectError(r, 400, 'resource_invalid_state');
      expect(r.body.error.message).toContain('VOID');
    }
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent', 'invoice.voided']);
  });

  it('when a DRAFT is voided or marked uncollectible, then it is refused (delete it instead)', async () => {
    const inv = await draft();
    expectError(await post(inv.id, 'void'), 400, 'resource_invalid_state');
    expectError(await post(inv.id, 'mark-uncollectible'), 400, 'resource_invalid_state');
  });

  it('when an OPEN invoice is marked uncollectible, then reminders stop, it can be sent again and voided', async () => {
    const inv = await open({ due_date: Math.floor(Date.now() / 1000) + 86400 });
    const sent = await post(inv.id, 'send');
    expect(sent.body.reminders.next_at).toEqual(expect.any(Number));
    const res = await post(inv.id, 'mark-uncollectible');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'UNCOLLECTIBLE', marked_uncollectible_at: expect.any(Number), reminders: { count: 0, next_at: null } });
    expectError(await post(inv.id, 'mark-uncollectible'), 400, 'resource_invalid_state');
    expect((await post(inv.id, 'send')).body.status).toBe('UNCOLLECTIBLE');
    expect((await post(inv.id, 'void')).body.status).toBe('VOID');
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent', 'invoice.marked_uncollectible', 'invoice.voided']);
  });

  it('when an invoice is partly paid, then void is refused (mark it uncollectible instead); when paid in full, then void and mark-uncollectible are refused', async () => {
    const inv = await open({ allow_partial_payments: true });
    await t.sql`update invoices set amount_paid_cents = 1000 where id = ${inv.id}`;
    const v = await post(inv.id, 'void');
    expectError(v, 400, 'resource_invalid_state');
    expect(v.body.error.message).toContain('uncollectible');
    expect((await post(inv.id, 'mark-uncollectible')).body.status).toBe('UNCOLLECTIBLE');
    expectError(await post(inv.id, 'void'), 400, 'resource_invalid_state');

    const paid = await open();
    await t.sql`update invoices set amount_paid_cents = total_cents, status = 'PAID', paid_at = now() where id = ${paid.id}`;
    for (const action of ['void', 'mark-uncollectible', 'send', 'finalize']) {
      const r = await post(paid.id, action);
      expectError(r, 400, 'resource_invalid_state');
      expect(r.body.error.message).toContain('PAID');
    }
  });

  it('when a payment of the invoice is in flight, then void is refused until it has ended', async () => {
    const inv = await open();
    const pay = newId('pay');
    await t.sql`
      insert into payments (id, account_id, livemode, amount_cents, currency, invoice_id, processing_since)
      values (${pay}, ${accountId}, false, 2900, 'usd', ${inv.id}, now())`;
    const r = await post(inv.id, 'void');
    expectError(r, 400, 'resource_invalid_state');
    expect(r.body.error.message).toContain('in progress');
    await t.sql`update payments set processing_since = null, status = 'FAILED', failed_at = now() where id = ${pay}`;
    expect((await post(inv.id, 'void')).body.status).toBe('VOID');
  });

  it('when a transition carries a body parameter, then 400 parameter_unknown', async () => {
    const inv = await draft();
    expectError(await post(inv.id, 'finalize', key, { number: 'INV-7' }), 400, 'parameter_unknown', 'number');
    expect((await get(inv.id)).body.status).toBe('DRAFT');
  });
});

describe('GET and list', () => {
  it('when the list is filtered by status and customer, then the cursor walks the filtered set', async () => {
    const a = await t.account();
    const c1 = await customer(t, a.test);
    const c2 = await customer(t, a.test);
    const ids: Record<string, string[]> = { c1open: [], c1draft: [], c2open: [] };
    for (let i = 0; i < 5; i++) ids.c1open!.push((await open({ customer_id: c1 }, a.test)).id);
    for (let i = 0; i < 2; i++) ids.c1draft!.push((await draft({ customer_id: c1 }, a.test)).id);
    for (let i = 0; i < 3; i++) ids.c2open!.push((await open({ customer_id: c2 }, a.test)).id);
    const list = (q: string) => t.request('GET', `/v1/invoices?${q}`, { key: a.test });

    const walked: string[] = [];
    let q = `status=OPEN&customer_id=${c1}&limit=2`;
    for (let page = 0; page < 5; page++) {
      const res = await list(q);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', url: '/v1/invoices' });
      walked.push(...res.body.data.map((i: any) => i.id));
      if (!res.body.has_more) break;
      q = `status=OPEN&customer_id=${c1}&limit=2&starting_after=${res.body.data.at(-1).id}`;
    }
    expect(walked).toEqual([...ids.c1open!].reverse());
    const back = await list(`status=OPEN&customer_id=${c1}&limit=2&ending_before=${ids.c1open![0]}`);
    expect(back.body.data.map((i: any) => i.id)).toEqual([ids.c1open![2], ids.c1open![1]]);

    expect((await list('status=DRAFT')).body.data.map((i: any) => i.id)).toEqual([...ids.c1draft!].reverse());
    expect((await list(`customer=${c2}`)).body.data.map((i: any) => i.id)).toEqual([...ids.c2open!].reverse());
    expect((await list('limit=100')).body.data).toHaveLength(10);
    expectError(await list('status=PENDING'), 400, 'parameter_invalid', 'status');
    expectError(await list(`customer=${c1}&customer_id=${c2}`), 400, 'parameter_invalid', 'customer');
    expectError(await list('starting_after=cus_1'), 400, 'parameter_invalid', 'starting_after');
    expectError(await list(`starting_after=${ids.c1open![0]}&ending_before=${ids.c1open![1]}`), 400, 'pagination_cursors_conflict');
    expectError(await list('total=1'), 400, 'parameter_unknown', 'total');
  });

  it("when another account's or the other mode's invoice is named, then 404 exactly like a missing one, and lists never show it", async () => {
    const inv = await open();
    const other = await t.account();
    for (const k of [other.test, live]) {
      expectError(await get(inv.id, k), 404, 'resource_missing', 'id');
      for (const action of ['finalize', 'send', 'void', 'mark-uncollectible']) expectError(await post(inv.id, action, k), 404, 'resource_missing');
      expectError(await patch(inv.id, { description: 'x' }, k), 404, 'resource_missing');
      expectError(await t.request('DELETE', `/v1/invoices/${inv.id}`, { key: k }), 404, 'resource_missing');
      const listed = await t.request('GET', '/v1/invoices?limit=100', { key: k });
      expect(listed.body.data.map((i: any) => i.id)).not.toContain(inv.id);
    }
    expectError(await get(newId('in')), 404, 'resource_missing');
    expectError(await get('in_not-an-id'), 404, 'resource_missing');
    expect((await get(inv.id)).body).toEqual(inv);
  });
});
