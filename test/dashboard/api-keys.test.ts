import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/keys.ts';
import { useLogCapture } from '../helpers/logs.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DashClient, formKey, signedIn } from './client.ts';

// The API keys section of the dashboard (/dashboard/api-keys): list, create, roll and revoke
// through the functions of /v1/api-keys, a secret shown once, and a revoked or ended key refused
// by the API within seconds, in this process and in a second one with its own key cache.

const capture = useLogCapture('trace');
// The default key cache (API_KEY_CACHE_SECONDS, 2 s).
const t = useTestServer({ log: capture.log });

const BASE = '/dashboard/api-keys';
const SECRET = /data-secret>(sk_(?:test|live)_[0-9A-Za-z]{32})</;

interface Acct {
  accountId: string;
  test: string;
  live: string;
}

/** The HTTP status the API answers this key (GET /v1/account), here or at `base`. */
async function apiStatus(key: string, base = t.url): Promise<number> {
  return (await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } })).status;
}

/** Polls every 100 ms until the API refuses the key (401); fails after 5 s. Answers how long it took. */
async function refusedWithin5s(key: string, base = t.url): Promise<number> {
  const start = Date.now();
  await eventually(async () => (await apiStatus(key, base)) === 401, 5_000, 100).catch(() => {
    throw new Error(`the key was still accepted after 5 s at ${base}`);
  });
  return Date.now() - start;
}

const keyIdOf = async (secret: string) => (await t.sql<{ id: string }[]>`select id from api_keys where key_hash = ${hashKey(secret)}`)[0]!.id;
const keyRow = async (id: string) => (await t.sql`select id, livemode, last4, expires_at, revoked_at from api_keys where id = ${id}`)[0]!;
const keyCount = async (accountId: string) => (await t.sql<{ n: number }[]>`select count(*)::int as n from api_keys where account_id = ${accountId}`)[0]!.n;
const secretOf = (html: string) => SECRET.exec(html)?.[1];

/** Creates a key through the dashboard and answers its secret and id. */
async function createInDashboard(c: DashClient): Promise<{ secret: string; id: string }> {
  await c.get(BASE);
  const res = await c.post(BASE, {});
  expect(res.status).toBe(200);
  const secret = secretOf(res.html)!;
  expect(secret).toBeDefined();
  return { secret, id: await keyIdOf(secret) };
}

let a: Acct;
let c: DashClient;
beforeAll(async () => {
  a = await t.account();
  c = await signedIn(t, a.accountId, 'owner@keys.example');
});

describe('the API keys list', () => {
  it('when opened, then it shows the mode\'s keys newest first with the last four, created, last used or "never", expiry and status, and says these are test keys', async () => {
    const b = await t.account();
    const cb = await signedIn(t, b.accountId, 'owner@list.example');
    const made = [await keyIdOf(b.test)];
    for (let i = 0; i < 2; i++) made.push((await t.request('POST', '/v1/api-keys', { key: b.test })).body.id);
    // One used (last_used), one rolled (expiring), one revoked.
    await t.sql`update api_keys set last_used_at = '2030-01-02T03:04:00Z' where id = ${made[0]!}`;
    const rolled = await t.request('POST', `/v1/api-keys/${made[1]}/roll`, { key: b.test, body: { expires_in: 3600 } });
    await t.request('POST', `/v1/api-keys/${made[2]}/revoke`, { key: b.test });
    const res = await cb.get(BASE);
    expect(res.status).toBe(200);
    expect(res.html).toContain('Test mode: keys made here are test keys');
    const ids = [...res.html.matchAll(/href="\/dashboard\/api-keys\/(key_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual([rolled.body.id, ...[...made].reverse()]);
    const rows = await t.sql<{ id: string; last4: string }[]>`select id, last4 from api_keys where account_id = ${b.accountId} and not livemode`;
    for (const r of rows) expect(res.html).toContain(`sk_test_…${r.last4}`);
    expect(res.html).toContain('2030-01-02 03:04 UTC');
    expect(res.html).toContain('never');
    for (const status of ['Active', 'Expiring', 'Revoked']) expect(res.html).toContain(`>${status}</span>`);
    // The live key of the account is not in the test list.
    const [liveRow] = await t.sql<{ last4: string }[]>`select last4 from api_keys where account_id = ${b.accountId} and livemode`;
    expect(res.html).not.toContain(`sk_live_…${liveRow!.last4}`);
    for (const secret of [b.test, b.live]) expect(res.html).not.toContain(secret);
  });

  it('when the list is longer than a page, then Older and Newer links page through it by cursor; a bad query is a 400 naming the parameter', async () => {
    const b = await t.account();
    const cb = await signedIn(t, b.accountId, 'owner@pages.example');
    for (let i = 0; i < 3; i++) await t.request('POST', '/v1/api-keys', { key: b.test });
    const all = (await t.sql<{ id: string }[]>`select id from api_keys where account_id = ${b.accountId} and not livemode order by id desc`).map((r) => r.id);
    const first = await cb.get(`${BASE}?limit=2`);
    const idsOn = (html: string) => [...html.matchAll(/href="\/dashboard\/api-keys\/(key_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(idsOn(first.html)).toEqual(all.slice(0, 2));
    const older = /href="([^"]+)" rel="next"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toContain(`starting_after=${all[1]}`);
    const second = await cb.get(older.includes('limit=') ? older : `${older}&limit=2`);
    expect(idsOn(second.html)).toEqual(all.slice(2, 4));
    const back = await cb.get(`${BASE}?limit=2&ending_before=${all[2]}`);
    expect(idsOn(back.html)).toEqual(all.slice(0, 2));
    const bad = await cb.get(`${BASE}?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('limit');
    const unknown = await cb.get(`${BASE}?name=x`);
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('name');
  });
});

describe('creating a key', () => {
  it('when Create is pressed, then the new secret is shown once with a Copy button and a warning; it works with the API; no later page shows it', async () => {
    const before = await keyCount(a.accountId);
    await c.get(BASE);
    const form = { _csrf: c.token, form_mode: 'test', idempotency_key: formKey() };
    const res = await c.send('POST', BASE, form);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const secret = secretOf(res.html)!;
    expect(secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(res.html).toContain(`data-copy="${secret}"`);
    expect(res.html).toContain('shown only this once');
    const id = await keyIdOf(secret);
    expect(await keyRow(id)).toMatchObject({ livemode: false, last4: secret.slice(-4), expires_at: null, revoked_at: null });
    expect(await keyCount(a.accountId)).toBe(before + 1);
    expect(await apiStatus(secret)).toBe(200);
    // The API lists the key the dashboard made.
    const listed = await t.request('GET', '/v1/api-keys?limit=100', { key: a.test });
    expect(listed.body.data.map((k: { id: string }) => k.id)).toContain(id);

    // The same form again (a double click, a reload): the list, without the secret, and no second key.
    const again = await c.send('POST', BASE, form);
    expect(again.status).toBe(303);
    expect(again.location).toBe(BASE);
    expect(await keyCount(a.accountId)).toBe(before + 1);
    for (const path of [BASE, `${BASE}/${id}`, `${BASE}/${id}?confirm=roll`, '/dashboard']) {
      const page = await c.get(path);
      expect(page.status, path).toBe(200);
      expect(page.html, path).not.toContain(secret);
      expect(page.html, path).not.toContain(secret.slice(8, 24));
    }
    expect(await t.sql`select 1 from idempotency_keys where response::text like ${`%${secret.slice(8)}%`}`).toEqual([]);
  });

  it('when the session views live data, then the page says keys are live and Create makes a live key', async () => {
    const b = await t.account();
    const cb = await signedIn(t, b.accountId, 'owner@live.example');
    await cb.post('/dashboard/mode', { mode: 'live', back: BASE });
    const page = await cb.get(BASE);
    expect(page.html).toContain('Keys made here are <strong>live keys</strong>');
    expect(page.html).toContain('Create a live key');
    const res = await cb.post(BASE, {});
    const secret = secretOf(res.html)!;
    expect(secret).toMatch(/^sk_live_/);
    expect(res.html).toContain('This is a live key');
    expect(await keyRow(await keyIdOf(secret))).toMatchObject({ livemode: true });
    expect(await t.request('GET', '/v1/account', { key: secret })).toMatchObject({ status: 200, body: { livemode: true } });
  });
});

describe('revoking a key', () => {
  it('when a key is revoked in the dashboard, then the API refuses it within seconds, here and in a second web process with its own key cache', async () => {
    const victim = await createInDashboard(c);
    const second = await secondWebApp(t);
    const other = second.url;
    try {
      // Both processes have the key in their cache.
      expect(await apiStatus(victim.secret)).toBe(200);
      expect(await apiStatus(victim.secret, other)).toBe(200);
      const panel = await c.get(`${BASE}/${victim.id}?confirm=revoke`);
      expect(panel.html).toContain('This cannot be undone');
      const res = await c.post(`${BASE}/${victim.id}/revoke`, {});
      expect(res.status).toBe(303);
      expect(res.location).toBe(`${BASE}/${victim.id}?done=revoked`);
      expect((await keyRow(victim.id)).revoked_at).toBeInstanceOf(Date);
      const [here, there] = await Promise.all([refusedWithin5s(victim.secret), refusedWithin5s(victim.secret, other)]);
      expect(here).toBeLessThan(5_000);
      expect(there).toBeLessThan(5_000);
      const page = await c.get(res.location!);
      expect(page.html).toContain('Key revoked.');
      expect(page.html).toContain('>Revoked</span>');
      // Revoked: no Roll or Revoke any more; the API shows it revoked.
      expect(page.html).not.toContain('?confirm=revoke');
      expect((await t.request('GET', `/v1/api-keys/${victim.id}`, { key: a.test })).body.revoked_at).toEqual(expect.any(Number));
    } finally {
      await second.close();
    }
  });

  it('when a revoked key is revoked or rolled again, then a 400 page says why and nothing changes', async () => {
    const k = await createInDashboard(c);
    await c.get(`${BASE}/${k.id}?confirm=revoke`);
    expect((await c.post(`${BASE}/${k.id}/revoke`, {})).status).toBe(303);
    const row = await keyRow(k.id);
    const again = await c.post(`${BASE}/${k.id}/revoke`, {});
    expect(again.status).toBe(400);
    expect(again.html).toContain('already revoked');
    const roll = await c.post(`${BASE}/${k.id}/roll`, { expires_in: '3600' });
    expect(roll.status).toBe(400);
    expect(roll.html).toContain('already revoked');
    expect(await keyRow(k.id)).toEqual(row);
  });
});

describe('rolling a key', () => {
  it('when a key is rolled with a 1-hour overlap, then the new secret is shown once, both keys work, and the old one expires in an hour', async () => {
    const old = await createInDashboard(c);
    const panel = await c.get(`${BASE}/${old.id}?confirm=roll`);
    expect(panel.status).toBe(200);
    for (const label of ['Stop it now', '1 hour', '24 hours', '3 days', '7 days']) expect(panel.html).toContain(`>${label}</option>`);
    const res = await c.post(`${BASE}/${old.id}/roll`, { expires_in: '3600' });
    expect(res.status).toBe(200);
    const secret = secretOf(res.html)!;
    expect(secret).toMatch(/^sk_test_/);
    expect(secret).not.toBe(old.secret);
    expect(res.html).toContain('keeps working until');
    const [row] = await t.sql<{ left: number }[]>`select extract(epoch from expires_at - now())::float as left from api_keys where id = ${old.id}`;
    expect(row!.left).toBeGreaterThan(3600 - 60);
    expect(row!.left).toBeLessThanOrEqual(3600);
    expect((await keyRow(old.id)).revoked_at).toBeNull();
    expect(await apiStatus(old.secret)).toBe(200);
    expect(await apiStatus(secret)).toBe(200);
    const page = await c.get(`${BASE}/${old.id}`);
    expect(page.html).toContain('>Expiring</span>');
    expect(page.html).not.toContain(secret);
    // A key already rolled cannot be rolled again (revoke it, or roll its replacement).
    const twice = await c.post(`${BASE}/${old.id}/roll`, { expires_in: '0' });
    expect(twice.status).toBe(400);
    expect(twice.html).toContain('already rolled');
  });

  it('when a key is rolled with no overlap, then the old key is refused within seconds and the new one works', async () => {
    const old = await createInDashboard(c);
    expect(await apiStatus(old.secret)).toBe(200);
    await c.get(`${BASE}/${old.id}?confirm=roll`);
    const res = await c.post(`${BASE}/${old.id}/roll`, { expires_in: '0' });
    expect(res.status).toBe(200);
    expect(res.html).toContain('has stopped working');
    const secret = secretOf(res.html)!;
    expect(await refusedWithin5s(old.secret)).toBeLessThan(5_000);
    expect(await apiStatus(secret)).toBe(200);
  });

  it('when the overlap is not one the API takes, then the roll form shows the problem beside the field and nothing changes', async () => {
    const k = await createInDashboard(c);
    const before = await keyCount(a.accountId);
    for (const bad of ['604801', 'soon', '-1', '']) {
      await c.get(`${BASE}/${k.id}?confirm=roll`);
      const res = await c.post(`${BASE}/${k.id}/roll`, { expires_in: bad });
      expect(res.status, bad).toBe(400);
      expect(res.html, bad).toMatch(/<p class="field-error" id="expires_in-error">[^<]*must be a whole number of seconds between 0 and 604800/);
      expect(res.html).toContain('aria-invalid="true"');
      // The select falls back to an overlap, never to "Stop it now".
      expect(res.html).toContain('<option value="3600" selected>1 hour</option>');
    }
    expect(await keyRow(k.id)).toMatchObject({ expires_at: null, revoked_at: null });
    expect(await keyCount(a.accountId)).toBe(before);
  });
});

describe('access to keys', () => {
  it("when another account's key or the other mode's is opened, rolled or revoked, then 404 and nothing changes", async () => {
    const b = await t.account();
    const theirs = await keyIdOf(b.test);
    const myLive = await keyIdOf(a.live);
    for (const id of [theirs, myLive, 'key_nonexistent0000000000000000', 'not-an-id']) {
      expect((await c.get(`${BASE}/${id}`)).status, id).toBe(404);
      await c.get(BASE);
      expect((await c.post(`${BASE}/${id}/roll`, { expires_in: '0' })).status, id).toBe(404);
      expect((await c.post(`${BASE}/${id}/revoke`, {})).status, id).toBe(404);
    }
    expect(await keyRow(theirs)).toMatchObject({ expires_at: null, revoked_at: null });
    expect(await keyRow(myLive)).toMatchObject({ expires_at: null, revoked_at: null });
    expect(await apiStatus(b.test)).toBe(200);
  });

  it('when there is no session, then every page and form goes to the sign-in page and nothing changes', async () => {
    const anon = new DashClient(t);
    const id = await keyIdOf(a.test);
    const before = await keyCount(a.accountId);
    for (const [method, path] of [['GET', BASE], ['GET', `${BASE}/${id}`], ['POST', BASE], ['POST', `${BASE}/${id}/revoke`], ['POST', `${BASE}/${id}/roll`]] as const) {
      const res = method === 'GET' ? await anon.get(path) : await anon.post(path, { expires_in: '0' });
      expect(res.status, path).toBe(303);
      expect(res.location).toBe('/dashboard/sign-in');
    }
    expect(await keyCount(a.accountId)).toBe(before);
    expect(await keyRow(id)).toMatchObject({ expires_at: null, revoked_at: null });
  });

  it('when the CSRF token is wrong or missing, then 403 and nothing changes', async () => {
    const id = await keyIdOf(a.test);
    const before = await keyCount(a.accountId);
    await c.get(BASE);
    for (const csrf of ['wrong', '']) {
      for (const path of [BASE, `${BASE}/${id}/revoke`, `${BASE}/${id}/roll`]) {
        const res = await c.post(path, { _csrf: csrf, expires_in: '0' });
        expect(res.status, path).toBe(403);
      }
    }
    expect(await keyCount(a.accountId)).toBe(before);
    expect(await keyRow(id)).toMatchObject({ expires_at: null, revoked_at: null });
  });

  it('when a form opened in test mode is posted after switching to live, then 409 and nothing changes', async () => {
    const b = await t.account();
    const cb = await signedIn(t, b.accountId, 'owner@modes.example');
    const id = await keyIdOf(b.test);
    await cb.get(`${BASE}/${id}?confirm=revoke`);
    const stale = { _csrf: cb.token, form_mode: 'test' };
    await cb.post('/dashboard/mode', { mode: 'live', back: BASE });
    const before = await keyCount(b.accountId);
    for (const path of [BASE, `${BASE}/${id}/revoke`, `${BASE}/${id}/roll`]) {
      const res = await cb.post(path, { ...stale, expires_in: '0' });
      expect(res.status, path).toBe(409);
      expect(res.html).toContain('Nothing was changed');
    }
    expect(await keyCount(b.accountId)).toBe(before);
    expect(await keyRow(id)).toMatchObject({ expires_at: null, revoked_at: null });
  });
});

describe('secrets and the log', () => {
  it('when keys are created, rolled and revoked in the dashboard, then the log records each by id and never holds a secret', async () => {
    const made = await createInDashboard(c);
    await c.get(`${BASE}/${made.id}?confirm=roll`);
    const rolled = await c.post(`${BASE}/${made.id}/roll`, { expires_in: '60' });
    const next = secretOf(rolled.html)!;
    const nextId = await keyIdOf(next);
    await c.get(`${BASE}/${nextId}?confirm=revoke`);
    await c.post(`${BASE}/${nextId}/revoke`, {});
    await refusedWithin5s(next);
    for (const text of ['api key created', 'api key rolled', 'api key revoked', made.id, nextId]) expect(capture.text).toContain(text);
    for (const secret of [made.secret, next]) {
      expect(capture.text).not.toContain(secret);
      expect(capture.text).not.toContain(secret.slice(8, 24));
    }
  });
});

afterAll(() => {
  capture.clear();
});
