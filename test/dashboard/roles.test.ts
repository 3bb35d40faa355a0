import { beforeAll, describe, expect, it } from 'vitest';
import { dashContext, ROLE_REFUSED, type Guard } from '../../src/dashboard/context.ts';
import { dashboardRouter, SECTIONS } from '../../src/dashboard/pages.ts';
import { createCsrf } from '../../src/pages/index.ts';
import { can, ROLES, type Role } from '../../src/team/roles.ts';
import { routesOf, type RouteEntry } from '../helpers/routes.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createUser, DashClient, PASSWORD } from './client.ts';
import { seedEverySection } from './crawl.ts';

// Every route of the dashboard, read from its routers (SECTIONS and the top-level router), for
// every role: each declares its permission with one guard, and a role without it gets the 403 page
// before anything is read or changed, forged form posts included.
const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
type Account = { accountId: string; test: string; live: string };
let a: Account;
let b: Account;
const clients = new Map<Role, DashClient>();
let routes: RouteEntry[];
const PUBLIC = new Set(['GET /sign-in', 'POST /sign-in', 'GET /set-password', 'POST /set-password', 'GET /assets/dashboard.js', 'GET /assets/webauthn.js', 'GET /assets/passkeys.js']);

const guardOf = (r: RouteEntry) => r.handlers[0] as Partial<Guard>;

async function signedInAs(accountId: string, email: string, role: Role): Promise<DashClient> {
  await createUser(t, accountId, email);
  await t.sql`update dashboard_users set role = ${role} where account_id = ${accountId} and email = ${email}`;
  const c = new DashClient(t);
  expect((await c.signIn(email, PASSWORD)).status).toBe(303);
  await c.get('/dashboard');
  return c;
}

/** The path with its parameters replaced by records of account A (test mode). */
async function concrete(path: string): Promise<string> {
  const one = async (table: string, extra = t.sql``) =>
    (await t.sql<{ id: string }[]>`select id from ${t.sql(table)} where account_id = ${a.accountId} ${extra} order by id limit 1`)[0]?.id ?? 'x_missing';
  const section = path.split('/')[1];
  const ids: Record<string, () => Promise<string>> = {
    payments: async () => (await t.sql<{ payment_id: string }[]>`select payment_id from disputes where account_id = ${a.accountId} limit 1`)[0]!.payment_id,
    'checkout-sessions': () => one('checkout_sessions'),
    'payment-links': () => one('payment_links'),
    customers: () => one('customers'),
    invoices: () => one('invoices'),
    events: () => one('events'),
    webhooks: () => one('webhook_endpoints'),
    'api-keys': () => one('api_keys', t.sql`and livemode = false and revoked_at is null and id <> (select id from api_keys where account_id = ${a.accountId} order by id limit 1)`),
    team: () => one('dashboard_users', t.sql`and email = 'victim@a.example'`),
  };
  let out = path;
  if (out.includes(':id')) out = out.replace(':id', await (ids[section!] ?? (() => Promise.resolve('x_missing')))());
  if (out.includes(':refundId')) out = out.replace(':refundId', await one('refunds'));
  if (out.includes(':disputeId')) out = out.replace(':disputeId', await one('disputes'));
  return `/dashboard${out === '/' ? '' : out}`;
}

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  await seedEverySection(t, a.test);
  // Spare keys: a forged roll or revoke by an allowed role spends one of these, never the seeding key.
  for (let i = 0; i < 3; i++) await t.request('POST', '/v1/api-keys', { key: a.test, body: {} });
  await createUser(t, a.accountId, 'victim@a.example');
  await t.sql`update dashboard_users set role = 'analyst' where email = 'victim@a.example'`;
  for (const role of ROLES) clients.set(role, await signedInAs(a.accountId, `${role}@a.example`, role));
  const ctx = dashContext(t.s, createCsrf(t.sql), '/x.js');
  routes = [
    ...routesOf(dashboardRouter(t.s)).filter((r) => !PUBLIC.has(`${r.method} ${r.path}`)),
    ...SECTIONS.flatMap(([mount, section]) => routesOf(section(ctx), mount === '/' ? '' : mount)),
  ];
}, 180_000);

describe('roles on every dashboard route', () => {
  it('when the routers are read, then every route but sign-in and set-password begins with one guard naming its permission', () => {
    expect(routes.length).toBeGreaterThan(50);
    for (const r of routes) {
      expect(guardOf(r).permission, `${r.method} ${r.path}`).toBeTypeOf('string');
      expect(r.handlers.slice(1).filter((h) => (h as Partial<Guard>).permission), `${r.method} ${r.path}: one guard`).toHaveLength(0);
    }
    // The team's and the settings' pages are not for everyone; the records are.
    const perm = (m: string, p: string) => guardOf(routes.find((r) => r.method === m && r.path === p)!).permission;
    expect(perm('GET', '/payments')).toBe('read');
    expect(perm('POST', '/payments/:id/refunds')).toBe('refunds.create');
    expect(perm('GET', '/team')).toBe('team.manage');
    expect(perm('POST', '/api-keys/:id/revoke')).toBe('keys.manage');
  });

  it('when every role opens every page and forges every form, then the server refuses exactly what its role lacks, with a readable 403 page, and changes nothing', async () => {
    const snapshot = async () => {
      const tables = ['customers', 'refunds', 'disputes', 'checkout_sessions', 'payment_links', 'invoices', 'webhook_endpoints', 'api_keys', 'dashboard_users', 'accounts', 'audit_events'];
      const out: Record<string, unknown> = {};
      for (const table of tables) out[table] = await t.sql`select * from ${t.sql(table)} where ${t.sql(table === 'accounts' ? 'id' : 'account_id')} = ${a.accountId} order by 1`;
      return JSON.stringify(out);
    };
    // The seeding's background work done first: each customer's processor record (the sweep's
    // update of customers, late on a loaded run) is not a change a refused form made.
    await eventually(async () => (await t.sql<{ n: number }[]>`select count(*)::int as n from customers where account_id = ${a.accountId} and processor_customer_id is null`)[0]!.n === 0, 20_000);
    const before = await snapshot();
    let refused = 0;
    // First every refusal (nothing may change), then what each role may do.
    for (const phase of ['refused', 'allowed'] as const) {
      for (const r of routes) {
        if (r.path === '/sign-out') continue;
        const path = await concrete(r.path);
        for (const role of ROLES) {
          const allowed = can(role, guardOf(r).permission!);
          if ((phase === 'allowed') !== allowed) continue;
          const c = clients.get(role)!;
          const res = r.method === 'GET' ? await c.get(path) : await c.post(path, r.path === '/mode' ? { mode: 'test', back: '/dashboard' } : {});
          const label = `${role} ${r.method} ${path}`;
          expect(res.status, label).toBeLessThan(500);
          if (allowed) {
            expect(res.html.includes(ROLE_REFUSED), label).toBe(false);
          } else {
            refused++;
            expect(res.status, label).toBe(403);
            expect(res.html, label).toContain(`<h1>${ROLE_REFUSED}</h1>`);
            expect(res.html, label).toContain(`Your role (${role})`);
          }
        }
      }
      if (phase === 'refused') {
        const after = await snapshot();
        // The tables that changed, for a failure to be read (the whole JSON is cut in the message).
        const changed = Object.keys(JSON.parse(before) as object).filter((k) => JSON.stringify(JSON.parse(before)[k]) !== JSON.stringify(JSON.parse(after)[k]));
        expect(changed).toEqual([]);
        expect(after).toBe(before);
      }
    }
    expect(refused).toBeGreaterThan(60);
  }, 240_000);

  it('when a role lacks a section, then the navigation does not show it', async () => {
    const nav = async (role: Role) => /<nav class="sections"[^]*?<\/nav>/.exec((await clients.get(role)!.get('/dashboard')).html)![0];
    expect(await nav('owner')).toContain('href="/dashboard/team"');
    expect(await nav('owner')).toContain('href="/dashboard/api-keys"');
    const support = await nav('support');
    for (const hidden of ['api-keys', 'webhooks', 'events', 'team', 'settings']) expect(support).not.toContain(`href="/dashboard/${hidden}"`);
    expect(support).toContain('href="/dashboard/payments"');
    expect(await nav('analyst')).not.toContain('href="/dashboard/settings"');
    expect(await nav('developer')).not.toContain('href="/dashboard/team"');
  });

  it("when a user of one account opens another account's records, then each is a 404, whatever their role", async () => {
    const other = await signedInAs(b.accountId, 'owner@b.example', 'owner');
    for (const r of routes.filter((x) => x.method === 'GET' && x.path.includes(':id'))) {
      const path = await concrete(r.path);
      expect((await other.get(path)).status, path).toBe(404);
    }
  });
});

describe("support's refund limit", () => {
  const payment = async () =>
    (await t.sql<{ id: string }[]>`
      select p.id from payments p where p.account_id = ${a.accountId} and p.status = 'SUCCEEDED' and p.amount_cents >= 4900
        and not exists (select 1 from disputes d where d.payment_id = p.id) order by p.id limit 1`)[0]!.id;
  const refunds = async (id: string) => (await t.sql<{ amount_cents: number }[]>`select amount_cents from refunds where payment_id = ${id} order by id`).map((r) => r.amount_cents);

  it('when no limit is set, then support cannot refund; when the owner sets one, support refunds up to it and no more, and only the owner sets it', async () => {
    const id = await payment();
    const support = clients.get('support')!;
    const before = await refunds(id);
    await support.get(`/dashboard/payments/${id}`);
    const none = await support.post(`/dashboard/payments/${id}/refunds`, { amount: '1.00' });
    expect(none.status).toBe(403);
    expect(none.html).toContain('no refund limit for it');

    const admin = clients.get('administrator')!;
    await admin.get('/dashboard/team');
    const byAdmin = await admin.post('/dashboard/team/refund-limits', { currency: 'usd', amount: '5.00' });
    expect(byAdmin.status).toBe(403);
    const owner = clients.get('owner')!;
    await owner.get('/dashboard/team');
    expect((await owner.post('/dashboard/team/refund-limits', { currency: 'usd', amount: '5.00' })).status).toBe(303);
    expect((await t.sql`select support_refund_limits from accounts where id = ${a.accountId}`)[0]!.support_refund_limits).toEqual({ usd: 500 });
    expect((await owner.get('/dashboard/team')).html).toContain('USD: $5.00');

    await support.get(`/dashboard/payments/${id}`);
    const over = await support.post(`/dashboard/payments/${id}/refunds`, { amount: '5.01' });
    expect(over.status).toBe(403);
    expect(over.html).toContain('at most $5.00');
    // Empty means all that is left, which is more than the limit.
    await support.get(`/dashboard/payments/${id}`);
    expect((await support.post(`/dashboard/payments/${id}/refunds`, {})).status).toBe(403);
    expect(await refunds(id)).toEqual(before);
    await support.get(`/dashboard/payments/${id}`);
    expect((await support.post(`/dashboard/payments/${id}/refunds`, { amount: '5.00' })).status).toBe(303);
    expect(await refunds(id)).toEqual([...before, 500]);
    // An administrator has no limit.
    await admin.get(`/dashboard/payments/${id}`);
    expect((await admin.post(`/dashboard/payments/${id}/refunds`, { amount: '6.00' })).status).toBe(303);
    // An empty amount removes the limit.
    await owner.get('/dashboard/team');
    expect((await owner.post('/dashboard/team/refund-limits', { currency: 'usd', amount: '' })).status).toBe(303);
    expect((await t.sql`select support_refund_limits from accounts where id = ${a.accountId}`)[0]!.support_refund_limits).toEqual({});
  });
});
