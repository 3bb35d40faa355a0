import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { crawl, RECORD_ID, seedEverySection, type Crawl } from './crawl.ts';

// Every page and every form of one account's dashboard, found by following its links as a user
// would, then tried from another account's session, from no session, and with a forged CSRF
// token: never a page of the first account, never a change.
const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
type Account = { accountId: string; test: string; live: string };
let a: Account;
let b: Account;
let owner: DashClient;

let pages: Crawl['pages'];
let forms: Crawl['forms'];
const ID = RECORD_ID;

/** What A's data looks like now: every row of A's account in the tables the dashboard changes. */
async function snapshot(accountId: string): Promise<string> {
  const tables = ['customers', 'payments', 'refunds', 'disputes', 'checkout_sessions', 'payment_links', 'invoices', 'webhook_endpoints', 'webhook_deliveries', 'events', 'api_keys', 'dashboard_users', 'emails'];
  const out: Record<string, unknown> = {};
  for (const table of tables) {
    out[table] = await t.sql`select * from ${t.sql(table)} where account_id = ${accountId} order by 1`;
  }
  out.account = await t.sql`select * from accounts where id = ${accountId}`;
  return JSON.stringify(out);
}

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  await seedEverySection(t, a.test);
  await t.sql`update accounts set business_name = 'A Tea Room' where id = ${a.accountId}`;
  owner = await signedIn(t, a.accountId, 'owner@a.example');
  ({ pages, forms } = await crawl(owner));
}, 120_000);

describe("one account's dashboard, from everywhere else", () => {
  it('when the dashboard is followed link by link, then every section and record page of the account is found', () => {
    const sections = ['payments', 'checkout-sessions', 'payment-links', 'customers', 'invoices', 'events', 'webhooks', 'api-keys', 'settings', 'security', 'team'];
    for (const s of sections) expect([...pages.keys()], s).toContain(`/dashboard/${s}`);
    const records = new Set([...pages.keys()].map((p) => ID.exec(p)?.[0].split('_')[0]).filter(Boolean));
    for (const prefix of ['pay', 'cs', 'pl', 'cus', 'in', 'evt', 'we', 'key']) expect([...records], prefix).toContain(prefix);
    expect(forms.size).toBeGreaterThan(20);
  });

  it("when another account's user opens any of the pages of this account's records, then each is the 404 page and shows nothing of them", async () => {
    const other = await signedIn(t, b.accountId, 'owner@b.example');
    // A record's page has its id in the path; a list filtered by an id (?customer=…) is a list.
    const inPath = (p: string) => ID.test(p.split('?')[0]!);
    const records = [...pages.keys()].filter(inPath);
    expect(records.length).toBeGreaterThan(20);
    // Exactly the answer of an id that does not exist: the same page once the id itself is masked.
    const masked = (html: string, id: string) => html.replaceAll(id, 'ID');
    for (const path of records) {
      const id = ID.exec(path)![0];
      const made = `${id.split('_')[0]}_${'0'.repeat(13)}${'z'.repeat(id.length - id.indexOf('_') - 14)}`;
      const [res, missing] = [await other.get(path), await other.get(path.replace(id, made))];
      expect(res.status, path).toBe(404);
      expect(masked(res.html, id), path).toBe(masked(missing.html, made));
      expect(res.html, path).not.toContain('A Tea Room');
    }
    // The lists of the other account never show A's records.
    for (const path of [...pages.keys()].filter((p) => !inPath(p))) {
      const res = await other.get(path);
      expect(res.status, path).toBeLessThan(500);
      // (A filter echoes the id typed in the URL: that one is the asker's own text.)
      const ids = new Set([...pages.get(path)!.matchAll(new RegExp(ID, 'g'))].map((m) => m[0]).filter((id) => !path.includes(id)));
      for (const id of ids) expect(res.html, `${path} shows ${id}`).not.toContain(id);
    }
  });

  it("when another account's user posts every form of this account's records with their own valid token, then each is refused and nothing of this account changes", async () => {
    const before = await snapshot(a.accountId);
    const other = await signedIn(t, b.accountId, 'poster@b.example');
    const actions = [...forms.values()].filter((f) => ID.test(f.action));
    expect(actions.length).toBeGreaterThan(15);
    for (const f of actions) {
      await other.get('/dashboard');
      const res = await other.post(f.action, { ...f.fields, _csrf: other.token, form_mode: other.mode, idempotency_key: formKey() });
      expect([403, 404], `${f.action} answered ${res.status}`).toContain(res.status);
    }
    expect(await snapshot(a.accountId)).toBe(before);
  });

  it('when nobody is signed in, then every page and every form answers the sign-in page and nothing changes', async () => {
    const before = await snapshot(a.accountId);
    const anon = new DashClient(t);
    for (const path of pages.keys()) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(303);
      expect(res.location, path).toBe('/dashboard/sign-in');
    }
    for (const f of forms.values()) {
      if (f.action === '/dashboard/sign-in') continue;
      const res = await anon.post(f.action, { ...f.fields });
      expect(res.status, f.action).toBe(303);
      expect(res.location, f.action).toBe('/dashboard/sign-in');
    }
    expect(await snapshot(a.accountId)).toBe(before);
  });

  it("when the account's own user posts every form with a forged or missing CSRF token, then each is refused with 403 and nothing changes", async () => {
    const before = await snapshot(a.accountId);
    for (const f of forms.values()) {
      const forged = await owner.post(f.action, { ...f.fields, _csrf: 'forged-token', idempotency_key: formKey() });
      expect(forged.status, f.action).toBe(403);
      const { _csrf: _, ...rest } = f.fields;
      const missing = await owner.send('POST', f.action, { ...rest, idempotency_key: formKey() });
      expect(missing.status, f.action).toBe(403);
    }
    expect(await snapshot(a.accountId)).toBe(before);
  });

  it('when a form is posted cross-site (Sec-Fetch-Site: cross-site) with a valid token, then it is refused', async () => {
    const before = await snapshot(a.accountId);
    const cross = new DashClient(t, { 'sec-fetch-site': 'cross-site' });
    for (const [k, v] of owner.cookies) cross.cookies.set(k, v);
    await owner.get('/dashboard/customers/new');
    const res = await cross.post('/dashboard/customers', { _csrf: owner.token, form_mode: 'test', email: 'cross@example.com' });
    expect(res.status).toBe(403);
    expect(await snapshot(a.accountId)).toBe(before);
  });
});
