import { beforeAll, describe, expect, it } from 'vitest';
import { apiRouters } from '../../src/app.ts';
import { accessNeeded, resourceOfPath } from '../../src/auth/scopes.ts';
import { routesOf, type RouteEntry } from '../helpers/routes.ts';
import { useTestServer } from '../helpers/server.ts';

// Restricted API keys (issue 25, point 3): every /v1 route, read from the routers the app mounts
// (apiRouters), refuses a key without the permission it needs with 403 and the error shape of
// DESIGN.md naming the permission, and lets through a key that has it.
const t = useTestServer();
let acct: { accountId: string; test: string; live: string };
let routes: RouteEntry[];

const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, 'x_0000');
const needed = (r: RouteEntry) => `${resourceOfPath(r.path)}.${accessNeeded(r.method, r.path)}`;

async function keyWith(permissions: unknown): Promise<string> {
  const res = await t.request('POST', '/v1/api-keys', { key: acct.test, body: { permissions } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.secret;
}

beforeAll(async () => {
  acct = await t.account();
  routes = apiRouters(t.s)
    .filter((m) => m.stage !== 'public')
    .flatMap((m) => routesOf(m.router, m.path === '/' ? '' : m.path));
});

describe('restricted keys on every /v1 route', () => {
  it('when a key has no permission, then every route answers 403 permission_error naming the permission it needs', async () => {
    expect(routes.length).toBeGreaterThan(60);
    const none = await keyWith({});
    for (const r of routes) {
      expect(resourceOfPath(r.path), `${r.method} ${r.path} belongs to a resource`).not.toBeNull();
      const res = await t.request(r.method, `/v1${concrete(r.path)}`, { key: none, body: r.method === 'GET' ? undefined : {} });
      const label = `${r.method} ${r.path}`;
      expect(res.status, label).toBe(403);
      expect(res.headers.get('request-id'), label).toBeTruthy();
      expect(res.body, label).toEqual({ error: { type: 'permission_error', code: 'forbidden', message: expect.stringContaining(`permission ${needed(r)}`) } });
    }
  });

  it('when a key has exactly the permission a route needs, then the scope lets it through', async () => {
    const keys = new Map<string, string>();
    for (const r of routes) {
      const [resource, access] = needed(r).split('.') as [string, string];
      if (access === 'write' && (resource === 'api_keys' || resource === 'audit_events')) continue; // never writable by a restricted key
      const id = `${resource}:${access}`;
      if (!keys.has(id)) keys.set(id, await keyWith({ [resource]: access }));
      const res = await t.request(r.method, `/v1${concrete(r.path)}`, { key: keys.get(id)!, body: r.method === 'GET' ? undefined : {} });
      expect(JSON.stringify(res.body), `${r.method} ${r.path}`).not.toContain('restricted API key');
    }
  });

  it('when a key is read only, then it reads every resource and writes none', async () => {
    const ro = await keyWith('read_only');
    expect((await t.request('GET', '/v1/customers', { key: ro })).status).toBe(200);
    expect((await t.request('GET', '/v1/payments', { key: ro })).status).toBe(200);
    const refused = await t.request('POST', '/v1/customers', { key: ro, body: { email: 'a@example.com' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('customers.write');
    expect(await t.sql`select count(*)::int as n from customers where account_id = ${acct.accountId}`).toEqual([{ n: 0 }]);
  });

  it('when keys are listed, then keys made before are full (permissions null) and a restricted key shows its permissions; a roll keeps them', async () => {
    const restricted = await t.request('POST', '/v1/api-keys', { key: acct.test, body: { permissions: { customers: 'write' } } });
    expect(restricted.body.permissions).toMatchObject({ customers: 'write', payments: 'none', api_keys: 'none' });
    const full = (await t.request('GET', '/v1/api-keys?limit=100', { key: acct.test })).body.data.at(-1);
    expect(full.permissions).toBeNull();
    const rolled = await t.request('POST', `/v1/api-keys/${restricted.body.id}/roll`, { key: acct.test, body: {} });
    expect(rolled.body.permissions).toEqual(restricted.body.permissions);
  });

  it('when a restricted key would manage keys, then it cannot: api_keys is at most read, so it can never make a full key', async () => {
    const bad = await t.request('POST', '/v1/api-keys', { key: acct.test, body: { permissions: { api_keys: 'write' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('permissions[api_keys]');
    const reader = await keyWith({ api_keys: 'read' });
    expect((await t.request('GET', '/v1/api-keys', { key: reader })).status).toBe(200);
    const made = await t.request('POST', '/v1/api-keys', { key: reader, body: {} });
    expect(made.status).toBe(403);
    expect(made.body.error.message).toContain('api_keys.write');
    const unknown = await t.request('POST', '/v1/api-keys', { key: acct.test, body: { permissions: { nothing: 'read' } } });
    expect(unknown.status).toBe(400);
  });
});
