import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

/**
 * Searches over the API against records made through the API (customers, sessions, invoices) and
 * payments made by the test helper's card payment, in two accounts and both modes.
 */
describe('GET /v1/search', () => {
  let key = '';
  let otherKey = '';
  let liveKey = '';
  const ids: Record<string, string> = {};
  const search = (resource: string, query: string, extra = '', k = key) =>
    t.request('GET', `/v1/search/${resource}?query=${encodeURIComponent(query)}${extra}`, { key: k });

  const pay = async (k: string, name: string, body: Record<string, unknown>, card = '4242424242424242') => {
    const cs = await t.request('POST', '/v1/checkout/sessions', { key: k, body: { currency: 'eur', success_url: 'https://example.com/ok', ...body } });
    expect(cs.status).toBe(200);
    const paid = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key: k, body: { card, email: body.customer_email ?? 'payer@example.com', name } });
    expect(paid.status).toBe(200);
    const [row] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.body.id} order by id desc limit 1`;
    ids[`cs:${name}`] = cs.body.id;
    return row!.id;
  };

  beforeAll(async () => {
    const a = await t.account();
    key = a.test;
    liveKey = a.live;
    otherKey = (await t.account()).test;
    const customer = async (k: string, body: Record<string, unknown>) => (await t.request('POST', '/v1/customers', { key: k, body })).body.id as string;
    ids.ada = await customer(key, { email: 'Ada@Example.com', first_name: 'Ada', last_name: 'Lovelace', metadata: { order_id: '1042' } });
    ids.grace = await customer(key, { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper', company_name: 'Navy' });
    ids.adaOther = await customer(otherKey, { email: 'ada@example.com', first_name: 'Ada', last_name: 'Other', metadata: { order_id: '1042' } });
    ids.adaLive = await customer(liveKey, { email: 'ada@example.com', first_name: 'Ada', last_name: 'Live' });

    ids.payAda = await pay(key, 'Ada Lovelace', { amount: 4000, customer_email: 'ada@example.com', metadata: { order_id: '1042' } });
    ids.payGrace = await pay(key, 'Grace Hopper', { amount: 1500, customer_email: 'grace@example.com' }, '4000000000000002');
    ids.payBig = await pay(key, 'Big Spender', { amount: 9000, customer_email: 'big_spender@example.com' }, '5555555555554444');
    ids.payOther = await pay(otherKey, 'Ada Other', { amount: 4000, customer_email: 'ada@example.com', metadata: { order_id: '1042' } });

    const invoice = async (customerId: string, amount: number) =>
      (await t.request('POST', '/v1/invoices', { key, body: { customer_id: customerId, currency: 'eur', line_items: [{ name: 'Work', quantity: 1, amount }], metadata: { project: 'kiln' } } })).body.id as string;
    ids.invAda = await invoice(ids.ada, 12000);
    ids.invGrace = await invoice(ids.grace, 300);
  });

  it('when payments are searched by email, amount, status, last4, metadata and text, then exactly the matching ones of the account and mode come back', async () => {
    const found = async (q: string) => {
      const r = await search('payments', q);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ object: 'list', url: '/v1/search/payments' });
      return (r.body.data as Array<{ id: string; object: string }>).map((p) => p.id);
    };
    expect(await found('email:"ADA@example.com"')).toEqual([ids.payAda]);
    expect(await found('amount>=4000')).toEqual([ids.payBig, ids.payAda]);
    expect(await found('amount<4000')).toEqual([ids.payGrace]);
    expect(await found('status:"SUCCEEDED"')).toEqual([ids.payBig, ids.payAda]);
    expect(await found('status:failed')).toEqual([ids.payGrace]);
    expect(await found('last4:"4242"')).toEqual([ids.payAda]);
    expect(await found('metadata["order_id"]:"1042"')).toEqual([ids.payAda]);
    expect(await found('lovelace')).toEqual([ids.payAda]);
    expect(await found('"grace hopper" OR last4:4444')).toEqual([ids.payBig, ids.payGrace]);
    expect(await found('ada amount>=4000 status:SUCCEEDED')).toEqual([ids.payAda]);
    expect(await found('(ada OR grace) AND amount<2000')).toEqual([ids.payGrace]);
    // LIKE's wildcards are matched as themselves.
    expect(await found('"g_s"')).toEqual([ids.payBig]);
    expect(await found('"e%c"')).toEqual([]);
    expect(await found('"e_e"')).toEqual([]);
    const created = (await t.request('GET', `/v1/payments/${ids.payAda}`, { key })).body.created as number;
    expect(await found(`created>=${created} ada`)).toEqual([ids.payAda]);
    expect(await found(`created<${created} ada`)).toEqual([]);
    expect(await found(`created:${created} lovelace`)).toEqual([ids.payAda]);
  });

  it('when customers, invoices and sessions are searched, then their fields and free text answer', async () => {
    const found = async (resource: string, q: string) => {
      const r = await search(resource, q);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.data as Array<{ id: string }>).map((p) => p.id);
    };
    expect(await found('customers', 'email:"ada@example.com"')).toEqual([ids.ada]);
    expect(await found('customers', 'navy')).toEqual([ids.grace]);
    expect(await found('customers', 'name:"lovelace"')).toEqual([ids.ada]);
    expect(await found('customers', 'metadata["order_id"]:"1042"')).toEqual([ids.ada]);
    expect(await found('invoices', 'email:"grace@example.com"')).toEqual([ids.invGrace]);
    expect(await found('invoices', 'lovelace')).toEqual([ids.invAda]);
    expect(await found('invoices', 'total>1000 status:draft')).toEqual([ids.invAda]);
    expect(await found('invoices', `customer:${ids.grace} OR metadata["project"]:"none"`)).toEqual([ids.invGrace]);
    expect(await found('checkout-sessions', 'metadata["order_id"]:"1042"')).toEqual([ids['cs:Ada Lovelace']]);
    expect(await found('checkout-sessions', 'email:"grace@example.com"')).toEqual([ids['cs:Grace Hopper']]);
    expect(await found('checkout-sessions', 'status:complete amount>=4000')).toEqual([ids['cs:Big Spender'], ids['cs:Ada Lovelace']]);
    expect(await found('checkout-sessions', 'status:open')).toEqual([ids['cs:Grace Hopper']]);
  });

  it('when another account or the other mode searches the same words, then it sees only its own records', async () => {
    const other = await search('payments', 'email:"ada@example.com"', '', otherKey);
    expect(other.body.data.map((p: { id: string }) => p.id)).toEqual([ids.payOther]);
    const live = await search('customers', 'ada', '', liveKey);
    expect(live.body.data.map((c: { id: string }) => c.id)).toEqual([ids.adaLive]);
    const test = await search('customers', 'ada');
    expect(test.body.data.map((c: { id: string }) => c.id)).toEqual([ids.ada]);
  });

  it('when results span pages, then starting_after and ending_before walk them like a list', async () => {
    const first = await search('payments', 'example', '&limit=2');
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((p: { id: string }) => p.id)).toEqual([ids.payBig, ids.payGrace]);
    const second = await search('payments', 'example', `&limit=2&starting_after=${ids.payGrace}`);
    expect(second.body).toMatchObject({ has_more: false });
    expect(second.body.data.map((p: { id: string }) => p.id)).toEqual([ids.payAda]);
    const back = await search('payments', 'example', `&limit=2&ending_before=${ids.payAda}`);
    expect(back.body.data.map((p: { id: string }) => p.id)).toEqual([ids.payBig, ids.payGrace]);
  });

  it.each([
    ['payments', 'amount>=', 'position 8'],
    ['payments', 'email:"ada@example.com" AND (status:SUCCEEDED', 'position 45'],
    ['payments', 'colour:red', 'position 0'],
    ['customers', 'status:OPEN', 'position 0'],
    ['invoices', 'total:"lots"', 'position 6'],
    ['payments', 'x', 'position 0'],
  ])('when %s is searched with the malformed %j, then a 400 names the query and the position', async (resource, q, where) => {
    const r = await search(resource, q);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'query' });
    expect(r.body.error.message).toContain(where);
    expect(r.headers.get('request-id')).toBeTruthy();
  });

  it('when the query is missing, too long, repeated or next to an unknown parameter, then a 400 names the parameter', async () => {
    const missing = await t.request('GET', '/v1/search/payments', { key });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('query');
    expect((await search('payments', 'a'.repeat(1001))).body.error.param).toBe('query');
    const twice = await t.request('GET', '/v1/search/payments?query=ada&query=bob', { key });
    expect(twice.status).toBe(400);
    expect(twice.body.error.param).toBe('query');
    const unknown = await search('payments', 'ada', '&sort=amount');
    expect(unknown.body.error).toMatchObject({ code: 'parameter_unknown', param: 'sort' });
    expect((await t.request('GET', '/v1/search/refunds?query=ada', { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/search/payments?query=ada', { key: null })).status).toBe(401);
  });
});
