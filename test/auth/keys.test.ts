import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/keys.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer({ env: { API_KEY_CACHE_SECONDS: '0' } });

describe('authentication', () => {
  describe.each([
    ['no Authorization header', undefined, 'api_key_missing'],
    ['an empty Bearer', 'Bearer ', 'api_key_invalid'],
    ['Basic auth', 'Basic dXNlcjpwYXNz', 'api_key_invalid'],
    ['a publishable-looking key', 'Bearer pk_test_abcdefabcdefabcdefabcdefabcdefab', 'api_key_invalid'],
    ['a key of the wrong length', 'Bearer sk_test_short', 'api_key_invalid'],
    ['an unknown well-formed key', 'Bearer sk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'api_key_invalid'],
    ['an unknown live key', 'Bearer sk_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'api_key_invalid'],
  ])('when a request carries %s', (_name, authorization, code) => {
    it.each(['GET /v1/account', 'GET /v1/customers', 'POST /v1/customers', 'GET /v1/no-such-route'])(
      `then %s answers 401 ${code}`,
      async (route) => {
        const [method, path] = route.split(' ') as [string, string];
        const res = await t.request(method, path, {
          headers: authorization ? { authorization } : {},
          body: method === 'POST' ? { email: 'a@b.co' } : undefined,
        });
        expect(res.status).toBe(401);
        expect(res.body.error).toMatchObject({ type: 'authentication_error', code });
        expect(res.headers.get('request-id')).toMatch(/^req_/);
      },
    );
  });

  it('when a key is created, then only its SHA-256 hash is stored', async () => {
    const { test } = await t.account();
    const rows = await t.sql`select key_hash, last4 from api_keys where key_hash = ${hashKey(test)}`;
    expect(rows).toHaveLength(1);
    const all = await t.sql`select * from api_keys`;
    expect(JSON.stringify(all)).not.toContain(test);
  });

  it('when a key is revoked, then it is refused', async () => {
    const { test } = await t.account();
    expect((await t.request('GET', '/v1/account', { key: test })).status).toBe(200);
    await t.sql`update api_keys set revoked_at = now() where key_hash = ${hashKey(test)}`;
    expect((await t.request('GET', '/v1/account', { key: test })).status).toBe(401);
  });

  it('when a live key calls /v1/account, then livemode is true', async () => {
    const a = await t.account();
    const res = await t.request('GET', '/v1/account', { key: a.live });
    expect(res.body).toEqual({ id: a.accountId, object: 'account', livemode: true, charges_enabled: false, business_name: null, support_email: null, brand_color: null, logo_url: null });
  });
});

describe('tenancy', () => {
  it('when a customer is created with a live key, then livemode is true and the row says so', async () => {
    const { live } = await t.account();
    const res = await t.request('POST', '/v1/customers', { key: live, body: { email: 'live@example.com' } });
    expect(res.body.livemode).toBe(true);
    const [row] = await t.sql`select livemode from customers where id = ${res.body.id}`;
    expect(row!.livemode).toBe(true);
  });

  it('when another account or the other mode asks for a customer, then it answers exactly like a missing id', async () => {
    const a = await t.account();
    const b = await t.account();
    const c = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'mine@example.com' } })).body;
    const missing = await t.request('GET', '/v1/customers/cus_01m7zzzzzzzzzzzzzzzzzzzzzz', { key: b.test });
    for (const key of [b.test, b.live, a.live]) {
      const get = await t.request('GET', `/v1/customers/${c.id}`, { key });
      expect(get.status).toBe(404);
      expect(get.body.error).toEqual({ ...missing.body.error, message: missing.body.error.message.replace('cus_01m7zzzzzzzzzzzzzzzzzzzzzz', c.id) });
      expect((await t.request('PATCH', `/v1/customers/${c.id}`, { key, body: { notes: 'x' } })).status).toBe(404);
      expect((await t.request('DELETE', `/v1/customers/${c.id}`, { key })).status).toBe(404);
    }
    const [row] = await t.sql`select notes from customers where id = ${c.id}`;
    expect(row!.notes).toBeNull();
    expect((await t.request('GET', `/v1/customers/${c.id}`, { key: a.test })).status).toBe(200);
  });

  it('when lists are read, then each account and mode sees only its own customers', async () => {
    const a = await t.account();
    const b = await t.account();
    const at = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'shared@example.com' } })).body.id;
    const al = (await t.request('POST', '/v1/customers', { key: a.live, body: { email: 'shared@example.com' } })).body.id;
    const bt = (await t.request('POST', '/v1/customers', { key: b.test, body: { email: 'shared@example.com' } })).body.id;
    const ids = async (key: string, qs = '') => (await t.request('GET', `/v1/customers${qs}`, { key })).body.data.map((c: any) => c.id);
    expect(await ids(a.test)).toEqual([at]);
    expect(await ids(a.live)).toEqual([al]);
    expect(await ids(b.test)).toEqual([bt]);
    expect(await ids(b.live)).toEqual([]);
    expect(await ids(a.test, '?email=shared@example.com')).toEqual([at]);
    // A cursor from another account's row only bounds the walk: it reveals nothing of that account.
    expect(await ids(b.test, `?starting_after=${al}`)).toEqual([]);
  });

  it('when a second key of the same account and mode is used, then it sees the same data', async () => {
    const a = await t.account();
    const other = await t.key(a.accountId, 'test');
    const c = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'k@example.com' } })).body;
    expect((await t.request('GET', `/v1/customers/${c.id}`, { key: other })).status).toBe(200);
  });
});
