import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const create = (body: unknown, k = key) => t.request('POST', '/v1/customers', { key: k, body });

describe('customers: create', () => {
  it('when all writable fields are sent, then the customer is returned and stored as sent', async () => {
    const body = {
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+44 20 7946 0000',
      company_name: 'Analytical Engines Ltd',
      notes: 'prefers invoices',
      metadata: { crm_id: '42' },
    };
    const res = await create(body);
    expect(res.status).toBe(200);
    // Test mode's processor is the simulator: its customer is made without a call, with ours.
    expect(res.body).toMatchObject({ ...body, object: 'customer', livemode: false, processor_customer_id: expect.stringMatching(/^pcus_sim_[0-9a-f]{24}$/) });
    expect(res.body.id).toMatch(/^cus_[0-9a-z]{29}$/);
    expect(res.body.created).toBeTypeOf('number');
    expect(res.body.updated).toBe(res.body.created);
    const [row] = await t.sql`select * from customers where id = ${res.body.id}`;
    expect(row).toMatchObject({ email: body.email, first_name: 'Ada', notes: 'prefers invoices', metadata: { crm_id: '42' } });
  });

  it('when only email is sent, then names are empty strings and nullable fields are null', async () => {
    const res = await create({ email: 'min@example.com' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ first_name: '', last_name: '', phone: null, company_name: null, notes: null, metadata: {} });
  });

  const long = (n: number) => 'x'.repeat(n);
  const manyPairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
  describe.each([
    ['email is missing', { first_name: 'x' }, 'email', 'parameter_missing'],
    ['email is not an address', { email: 'not-an-email' }, 'email', 'parameter_invalid'],
    ['email is not a string', { email: 7 }, 'email', 'parameter_invalid'],
    ['email is null', { email: null }, 'email', 'parameter_invalid'],
    ['first_name is over 500 characters', { email: 'a@b.co', first_name: long(501) }, 'first_name', 'parameter_invalid'],
    ['first_name is null', { email: 'a@b.co', first_name: null }, 'first_name', 'parameter_invalid'],
    ['company_name is over 500 characters', { email: 'a@b.co', company_name: long(501) }, 'company_name', 'parameter_invalid'],
    ['notes are over 5,000 characters', { email: 'a@b.co', notes: long(5001) }, 'notes', 'parameter_invalid'],
    ['metadata has 21 pairs', { email: 'a@b.co', metadata: manyPairs(21) }, 'metadata', 'parameter_invalid'],
    ['a metadata key is over 40 characters', { email: 'a@b.co', metadata: { [long(41)]: 'v' } }, `metadata`, 'parameter_invalid'],
    ['a metadata value is over 500 characters', { email: 'a@b.co', metadata: { k: long(501) } }, 'metadata[k]', 'parameter_invalid'],
    ['a metadata value is a number', { email: 'a@b.co', metadata: { k: 1 } }, 'metadata[k]', 'parameter_invalid'],
    ['metadata is an array', { email: 'a@b.co', metadata: ['a'] }, 'metadata', 'parameter_invalid'],
    ['processor_customer_id is sent', { email: 'a@b.co', processor_customer_id: 'x' }, 'processor_customer_id', 'parameter_unknown'],
    ['id is sent', { email: 'a@b.co', id: 'cus_x' }, 'id', 'parameter_unknown'],
    ['object is sent', { email: 'a@b.co', object: 'customer' }, 'object', 'parameter_unknown'],
    ['livemode is sent', { email: 'a@b.co', livemode: true }, 'livemode', 'parameter_unknown'],
    ['created is sent', { email: 'a@b.co', created: 1 }, 'created', 'parameter_unknown'],
    ['updated is sent', { email: 'a@b.co', updated: 1 }, 'updated', 'parameter_unknown'],
    ['an unknown field is sent', { email: 'a@b.co', nickname: 'x' }, 'nickname', 'parameter_unknown'],
  ])('when %s', (_name, body, param, code) => {
    it(`then 400 ${code} names ${param} and nothing is stored`, async () => {
      const before = await t.sql`select count(*)::int as n from customers`;
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
      expect(res.body.error.message).toEqual(expect.any(String));
      const after = await t.sql`select count(*)::int as n from customers`;
      expect(after[0]!.n).toBe(before[0]!.n);
    });
  });

  it('when exactly 20 metadata pairs and the maximum lengths are sent, then they are accepted', async () => {
    const res = await create({ email: 'max@example.com', first_name: long(500), notes: long(5000), metadata: { ...manyPairs(19), [long(40)]: long(500) } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.metadata)).toHaveLength(20);
  });
});

describe('customers: retrieve, update, delete', () => {
  it('when a customer is retrieved, then it equals what create returned', async () => {
    const created = (await create({ email: 'get@example.com', first_name: 'G' })).body;
    const res = await t.request('GET', `/v1/customers/${created.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it('when an unknown id is retrieved, then 404 resource_missing', async () => {
    const res = await t.request('GET', '/v1/customers/cus_01m7zzzzzzzzzzzzzzzzzzzzzz', { key });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
  });

  it('when a customer is patched, then the updated customer is returned and stored, and other fields stay', async () => {
    const c = (await create({ email: 'p@example.com', first_name: 'P', phone: '1', notes: 'n', metadata: { a: '1', b: '2' } })).body;
    // `updated` has one-second resolution: the clock is moved (the row made older), not waited for.
    const [aged] = await t.sql<{ at: number }[]>`
      update customers set updated_at = updated_at - interval '2 seconds' where id = ${c.id} returning extract(epoch from updated_at)::float8 as at`;
    const res = await t.request('PATCH', `/v1/customers/${c.id}`, { key, body: { last_name: 'Q', phone: null, metadata: { b: '', c: '3' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, email: 'p@example.com', first_name: 'P', last_name: 'Q', phone: null, notes: 'n', metadata: { a: '1', c: '3' } });
    expect(res.body.updated).toBeGreaterThan(Math.floor(aged!.at));
    expect(res.body.created).toBe(c.created);
    const [row] = await t.sql`select phone, last_name, metadata from customers where id = ${c.id}`;
    expect(row).toEqual({ phone: null, last_name: 'Q', metadata: { a: '1', c: '3' } });
  });

  it('when metadata is patched to null, then every pair is removed', async () => {
    const c = (await create({ email: 'm@example.com', metadata: { a: '1' } })).body;
    const res = await t.request('PATCH', `/v1/customers/${c.id}`, { key, body: { metadata: null, company_name: null, notes: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ metadata: {}, company_name: null, notes: null });
  });

  it('when a patch would bring metadata over 20 pairs, then 400 and nothing changes', async () => {
    const c = (await create({ email: 'm2@example.com', metadata: Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`a${i}`, 'v'])) })).body;
    const res = await t.request('PATCH', `/v1/customers/${c.id}`, {
      key,
      body: { metadata: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`b${i}`, 'v'])) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'metadata' });
    const [row] = await t.sql`select metadata from customers where id = ${c.id}`;
    expect(Object.keys(row!.metadata)).toHaveLength(15);
  });

  describe.each([
    [{ email: null }, 'email', 'parameter_invalid'],
    [{ first_name: null }, 'first_name', 'parameter_invalid'],
    [{ email: 'bad' }, 'email', 'parameter_invalid'],
    [{ processor_customer_id: 'cus_proc' }, 'processor_customer_id', 'parameter_unknown'],
    [{ created: 5 }, 'created', 'parameter_unknown'],
    [{ id: 'cus_other' }, 'id', 'parameter_unknown'],
  ])('when a patch sends %j', (body, param, code) => {
    it(`then 400 ${code} on ${param}`, async () => {
      const c = (await create({ email: 'bad-patch@example.com' })).body;
      const res = await t.request('PATCH', `/v1/customers/${c.id}`, { key, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code, param });
    });
  });

  it('when an unknown id is patched, then 404', async () => {
    const res = await t.request('PATCH', '/v1/customers/cus_01m7zzzzzzzzzzzzzzzzzzzzzz', { key, body: { notes: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_missing');
  });

  it('when a customer is deleted, then the answer says deleted, the row is gone and the id answers 404', async () => {
    const c = (await create({ email: 'del@example.com' })).body;
    const res = await t.request('DELETE', `/v1/customers/${c.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: c.id, object: 'customer', deleted: true });
    expect(await t.sql`select 1 from customers where id = ${c.id}`).toHaveLength(0);
    expect((await t.request('GET', `/v1/customers/${c.id}`, { key })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/customers/${c.id}`, { key })).status).toBe(404);
    expect((await t.request('PATCH', `/v1/customers/${c.id}`, { key, body: { notes: 'x' } })).status).toBe(404);
  });
});

describe('customers: list', () => {
  it('when the list is filtered by email, then only that email is listed and cursors walk the filtered set', async () => {
    const k = (await t.account()).test;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await create({ email: 'same@example.com', first_name: `n${i}` }, k)).body.id);
      await create({ email: `other${i}@example.com` }, k);
    }
    const first = await t.request('GET', '/v1/customers?email=same@example.com&limit=2', { key: k });
    expect(first.status).toBe(200);
    expect(first.body.data.map((c: any) => c.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.has_more).toBe(true);
    const second = await t.request('GET', `/v1/customers?email=same@example.com&limit=2&starting_after=${ids[3]}`, { key: k });
    expect(second.body.data.map((c: any) => c.id)).toEqual([ids[2], ids[1]]);
    const third = await t.request('GET', `/v1/customers?email=same@example.com&limit=2&starting_after=${ids[1]}`, { key: k });
    expect(third.body.data.map((c: any) => c.id)).toEqual([ids[0]]);
    expect(third.body.has_more).toBe(false);
    const none = await t.request('GET', '/v1/customers?email=nobody@example.com', { key: k });
    expect(none.body).toEqual({ object: 'list', url: '/v1/customers', has_more: false, data: [] });
  });

  it('when an email filter is sent twice, then 400 naming email', async () => {
    const res = await t.request('GET', '/v1/customers?email=a@b.co&email=c@d.co', { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
  });
});
