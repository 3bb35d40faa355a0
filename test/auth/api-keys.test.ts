import { beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/keys.ts';
import { useLogCapture } from '../helpers/logs.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

// Everything the service logs, redaction included, at the most verbose level.
const capture = useLogCapture('trace');
// The default cache (API_KEY_CACHE_SECONDS, 2 s): revocation must take effect through it.
const t = useTestServer({ log: capture.log });

const req = (method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) =>
  t.request(method, path, { key, body, ...(headers ? { headers } : {}) });
const accountStatus = async (key: string, base?: string) =>
  base ? (await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } })).status : (await req('GET', '/v1/account', key)).status;
const keyIdOf = async (secret: string) => {
  const [row] = await t.sql<{ id: string }[]>`select id from api_keys where key_hash = ${hashKey(secret)}`;
  return row!.id;
};

const KEY_OBJECT_FIELDS = ['created', 'expires_at', 'id', 'last4', 'last_used', 'livemode', 'object', 'permissions', 'revoked_at'];

describe('/v1/api-keys', () => {
  it('when a key is created, then its secret is answered once and works; GET and the list never show it', async () => {
    const a = await t.account();
    const created = await req('POST', '/v1/api-keys', a.test, {});
    expect(created.status).toBe(200);
    const { secret, ...key } = created.body;
    expect(secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(key).toMatchObject({ object: 'api_key', livemode: false, last4: secret.slice(-4), last_used: null, expires_at: null, revoked_at: null });
    expect(key.id).toMatch(/^key_/);
    expect(Math.abs(key.created - Date.now() / 1000)).toBeLessThan(60);
    expect((await req('GET', '/v1/account', secret)).body.id).toBe(a.accountId);

    const get = await req('GET', `/v1/api-keys/${key.id}`, a.test);
    expect(Object.keys(get.body).sort()).toEqual(KEY_OBJECT_FIELDS);
    const list = await req('GET', '/v1/api-keys', a.test);
    expect(list.body).toMatchObject({ object: 'list', url: '/v1/api-keys', has_more: false });
    for (const item of list.body.data) expect(Object.keys(item).sort()).toEqual(KEY_OBJECT_FIELDS);
    expect(JSON.stringify([get.body, list.body])).not.toContain(secret);
    expect(JSON.stringify(await t.sql`select * from api_keys`)).not.toContain(secret);
  });

  it('when keys are listed, then only the calling account and mode are shown, newest first, by cursor pages', async () => {
    const a = await t.account();
    const b = await t.account();
    const made: string[] = [(await keyIdOf(a.test))];
    for (let i = 0; i < 3; i++) made.push((await req('POST', '/v1/api-keys', a.test)).body.id);
    await req('POST', '/v1/api-keys', a.live);
    await req('POST', '/v1/api-keys', b.test);
    const newestFirst = [...made].reverse();

    const all = await req('GET', '/v1/api-keys?limit=100', a.test);
    expect(all.body.data.map((k: { id: string }) => k.id)).toEqual(newestFirst);
    const first = await req('GET', '/v1/api-keys?limit=2', a.test);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((k: { id: string }) => k.id)).toEqual(newestFirst.slice(0, 2));
    const next = await req('GET', `/v1/api-keys?limit=2&starting_after=${newestFirst[1]}`, a.test);
    expect(next.body.data.map((k: { id: string }) => k.id)).toEqual(newestFirst.slice(2));
    expect(next.body.has_more).toBe(false);
    const back = await req('GET', `/v1/api-keys?limit=2&ending_before=${newestFirst[2]}`, a.test);
    expect(back.body.data.map((k: { id: string }) => k.id)).toEqual(newestFirst.slice(0, 2));

    expect((await req('GET', '/v1/api-keys', a.live)).body.data).toHaveLength(2);
    expect((await req('GET', '/v1/api-keys', a.live)).body.data.every((k: { livemode: boolean }) => k.livemode)).toBe(true);
    expect((await req('GET', '/v1/api-keys', b.test)).body.data.map((k: { id: string }) => k.id)).not.toContain(made[1]);
    expect((await req('GET', '/v1/api-keys?limit=0', a.test)).body.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
    expect((await req('GET', '/v1/api-keys?starting_after=cus_x', a.test)).body.error).toMatchObject({ param: 'starting_after' });
    expect((await req('GET', '/v1/api-keys?name=x', a.test)).body.error).toMatchObject({ code: 'parameter_unknown', param: 'name' });
  });

  it("when another account's key or the other mode's is read, rolled or revoked, then 404 as for a missing id, and nothing changes", async () => {
    const a = await t.account();
    const b = await t.account();
    const target = await keyIdOf(a.test);
    for (const key of [b.test, b.live, a.live]) {
      for (const [method, path] of [['GET', ''], ['POST', '/roll'], ['POST', '/revoke']] as const) {
        const res = await req(method, `/v1/api-keys/${target}${path}`, key, method === 'POST' ? {} : undefined);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error).toEqual({ type: 'invalid_request_error', code: 'resource_missing', message: `No such api_key: '${target}'`, param: 'id' });
      }
    }
    expect((await req('GET', '/v1/api-keys/not-an-id', a.test)).status).toBe(404);
    expect(await t.sql`select expires_at, revoked_at from api_keys where id = ${target}`).toEqual([{ expires_at: null, revoked_at: null }]);
    expect((await t.sql`select count(*)::int as n from api_keys where account_id = ${a.accountId}`)[0]!.n).toBe(2);
    expect(await accountStatus(a.test)).toBe(200);
  });

  it('when a key is revoked, then it is refused within seconds, here and in a second process on the same database', async () => {
    const a = await t.account();
    const victim = (await req('POST', '/v1/api-keys', a.test)).body;
    // A second web process: its own key cache, the same database.
    const second = await secondWebApp(t);
    const other = second.url;
    try {
      // Both processes have the key in their cache.
      expect(await accountStatus(victim.secret)).toBe(200);
      expect(await accountStatus(victim.secret, other)).toBe(200);
      const revoked = await req('POST', `/v1/api-keys/${victim.id}/revoke`, a.test);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ id: victim.id, object: 'api_key' });
      expect(revoked.body.revoked_at).toEqual(expect.any(Number));
      expect(revoked.body).not.toHaveProperty('secret');
      await eventually(async () => (await accountStatus(victim.secret)) === 401, 10_000);
      await eventually(async () => (await accountStatus(victim.secret, other)) === 401, 10_000);
      const refused = await req('GET', '/v1/account', victim.secret);
      expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_invalid' });
      // Revoking again, or rolling a revoked key, is refused; the list shows it revoked.
      expect((await req('POST', `/v1/api-keys/${victim.id}/revoke`, a.test)).body.error).toMatchObject({ code: 'resource_invalid_state', param: 'id' });
      expect((await req('POST', `/v1/api-keys/${victim.id}/roll`, a.test)).body.error).toMatchObject({ code: 'resource_invalid_state', param: 'id' });
      expect((await req('GET', `/v1/api-keys/${victim.id}`, a.test)).body.revoked_at).toBe(revoked.body.revoked_at);
    } finally {
      await second.close();
    }
  });

  it('when a key is rolled with expires_in, then the new key works at once and the old one until it expires, then is refused', async () => {
    const a = await t.account();
    const old = (await req('POST', '/v1/api-keys', a.test)).body;
    expect(await accountStatus(old.secret)).toBe(200);
    const rolled = await req('POST', `/v1/api-keys/${old.id}/roll`, a.test, { expires_in: 3600 });
    expect(rolled.status).toBe(200);
    expect(rolled.body.id).not.toBe(old.id);
    expect(rolled.body.secret).toMatch(/^sk_test_/);
    expect(rolled.body.expires_at).toBeNull();
    expect(await accountStatus(rolled.body.secret)).toBe(200);
    const oldNow = (await req('GET', `/v1/api-keys/${old.id}`, a.test)).body;
    expect(Math.abs(oldNow.expires_at - (Math.floor(Date.now() / 1000) + 3600))).toBeLessThan(60);
    expect(oldNow.revoked_at).toBeNull();
    // Inside the overlap (an hour, whatever the machine's speed): the old key still answers.
    expect(await accountStatus(old.secret)).toBe(200);
    // The clock passes the overlap's end (moved, not waited for: the database's clock decides), and
    // the old key is refused once the key cache (2 s) has let it go.
    await t.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${old.id}`;
    await eventually(async () => (await accountStatus(old.secret)) === 401, 10_000);
    expect(await accountStatus(rolled.body.secret)).toBe(200);
    // An expired key cannot be rolled again.
    expect((await req('POST', `/v1/api-keys/${old.id}/roll`, a.test, { expires_in: 60 })).body.error).toMatchObject({ code: 'resource_invalid_state' });
  });

  it('when a key is rolled with the default expires_in, then the old key ends now; a key already rolled cannot be rolled again', async () => {
    const a = await t.account();
    const old = (await req('POST', '/v1/api-keys', a.test)).body;
    const rolled = await req('POST', `/v1/api-keys/${old.id}/roll`, a.test);
    expect(rolled.status).toBe(200);
    await eventually(async () => (await accountStatus(old.secret)) === 401, 10_000);
    const overlap = (await req('POST', '/v1/api-keys', a.test)).body;
    expect((await req('POST', `/v1/api-keys/${overlap.id}/roll`, a.test, { expires_in: 604800 })).status).toBe(200);
    const again = await req('POST', `/v1/api-keys/${overlap.id}/roll`, a.test, { expires_in: 10 });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'resource_invalid_state', param: 'id' });
    expect(again.body.error.message).toMatch(/already rolled/);
  });

  it('when the calling key would revoke itself or roll itself with no overlap, then 400 says why and the key keeps working', async () => {
    const a = await t.account();
    const self = await keyIdOf(a.test);
    const revoke = await req('POST', `/v1/api-keys/${self}/revoke`, a.test);
    expect(revoke.status).toBe(400);
    expect(revoke.body.error).toMatchObject({ code: 'resource_invalid_state', param: 'id' });
    expect(revoke.body.error.message).toMatch(/lock you out/);
    const roll = await req('POST', `/v1/api-keys/${self}/roll`, a.test, { expires_in: 0 });
    expect(roll.status).toBe(400);
    expect(roll.body.error).toMatchObject({ code: 'resource_invalid_state', param: 'expires_in' });
    expect(roll.body.error.message).toMatch(/lock you out/);
    expect(await t.sql`select expires_at, revoked_at from api_keys where id = ${self}`).toEqual([{ expires_at: null, revoked_at: null }]);
    expect((await t.sql`select count(*)::int as n from api_keys where account_id = ${a.accountId}`)[0]!.n).toBe(2);
    // With an overlap, rolling the calling key is allowed: it keeps working until then.
    const withOverlap = await req('POST', `/v1/api-keys/${self}/roll`, a.test, { expires_in: 3600 });
    expect(withOverlap.status).toBe(200);
    expect(await accountStatus(a.test)).toBe(200);
  });

  it('when parameters are wrong, then 400 names the parameter and no key is made', async () => {
    const a = await t.account();
    const id = (await req('POST', '/v1/api-keys', a.test)).body.id;
    const before = (await t.sql`select count(*)::int as n from api_keys`)[0]!.n;
    const cases: Array<[string, unknown, string, string]> = [
      ['/v1/api-keys', { name: 'ci' }, 'parameter_unknown', 'name'],
      [`/v1/api-keys/${id}/roll`, { expires_in: -1 }, 'parameter_invalid', 'expires_in'],
      [`/v1/api-keys/${id}/roll`, { expires_in: 604801 }, 'parameter_invalid', 'expires_in'],
      [`/v1/api-keys/${id}/roll`, { expires_in: 1.5 }, 'parameter_invalid', 'expires_in'],
      [`/v1/api-keys/${id}/roll`, { expires_in: '60' }, 'parameter_invalid', 'expires_in'],
      [`/v1/api-keys/${id}/roll`, { expires_at: 60 }, 'parameter_unknown', 'expires_at'],
      [`/v1/api-keys/${id}/revoke`, { now: true }, 'parameter_unknown', 'now'],
    ];
    for (const [path, body, code, param] of cases) {
      const res = await req('POST', path, a.test, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code, param });
    }
    expect((await t.sql`select count(*)::int as n from api_keys`)[0]!.n).toBe(before);
    expect(await t.sql`select expires_at, revoked_at from api_keys where id = ${id}`).toEqual([{ expires_at: null, revoked_at: null }]);
  });

  it('when a create carries an Idempotency-Key, then it is refused (the stored answer would hold the secret) and no key is made', async () => {
    const a = await t.account();
    const before = (await t.sql`select count(*)::int as n from api_keys`)[0]!.n;
    const res = await req('POST', '/v1/api-keys', a.test, {}, { 'idempotency-key': 'k1' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_invalid' });
    expect((await t.sql`select count(*)::int as n from api_keys`)[0]!.n).toBe(before);
    expect(await t.sql`select 1 from idempotency_keys where account_id = ${a.accountId}`).toEqual([]);
  });

  it('when a key is used, then last_used is recorded shortly after', async () => {
    const a = await t.account();
    const fresh = (await req('POST', '/v1/api-keys', a.test)).body;
    expect((await req('GET', `/v1/api-keys/${fresh.id}`, a.test)).body.last_used).toBeNull();
    await req('GET', '/v1/account', fresh.secret);
    const used = await eventually(async () => (await req('GET', `/v1/api-keys/${fresh.id}`, a.test)).body.last_used as number | null);
    expect(Math.abs(used - Date.now() / 1000)).toBeLessThan(60);
  });

  it('when keys are created, rolled, revoked and refused, then no secret appears in the log', async () => {
    const a = await t.account();
    const created = (await req('POST', '/v1/api-keys', a.test)).body;
    const rolled = (await req('POST', `/v1/api-keys/${created.id}/roll`, a.test, { expires_in: 0 })).body;
    await req('POST', `/v1/api-keys/${rolled.id}/revoke`, a.test);
    await eventually(async () => (await accountStatus(rolled.secret)) === 401, 10_000);
    await req('POST', '/v1/api-keys', rolled.secret, { bad: 1 });
    await eventually(async () => capture.text.includes(rolled.id));
    expect(capture.text).toContain('api key rolled');
    for (const secret of [a.test, created.secret, rolled.secret]) {
      expect(capture.text).not.toContain(secret);
      expect(capture.text).not.toContain(secret.slice(8, 24));
    }
  });
});

describe('PATCH /v1/account', () => {
  let a: { accountId: string; test: string; live: string };
  beforeAll(async () => {
    a = await t.account();
  });

  it('when the business name is patched, then it is set as by POST, with the same validation', async () => {
    const res = await req('PATCH', '/v1/account', a.live, { business_name: ' Tea Room ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: a.accountId, object: 'account', business_name: 'Tea Room' });
    expect((await req('GET', '/v1/account', a.test)).body.business_name).toBe('Tea Room');
    const bad = await req('PATCH', '/v1/account', a.live, { business_name: '' });
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'business_name' });
    expect((await req('PATCH', '/v1/account', a.live, { brand_colour: '#000000' })).body.error).toMatchObject({ code: 'parameter_unknown', param: 'brand_colour' });
    expect((await req('GET', '/v1/account', a.test)).body.business_name).toBe('Tea Room');
  });
});
