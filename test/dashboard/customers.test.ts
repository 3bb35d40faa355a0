import { beforeAll, describe, expect, it } from 'vitest';
import { simulatedCustomerId } from '../../src/processor/simulator.ts';
import { useTestServer } from '../helpers/server.ts';
import { DashClient, formKey, signedIn } from './client.ts';

const t = useTestServer();
let a: { accountId: string; test: string; live: string };
let b: { accountId: string; test: string; live: string };
let c: DashClient;

const customer = async (key: string, body: Record<string, unknown>) => (await t.request('POST', '/v1/customers', { key, body })).body;
const count = async (accountId: string) => Number((await t.sql`select count(*) from customers where account_id = ${accountId}`)[0]!.count);

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  c = await signedIn(t, a.accountId, 'owner@customers.example');
});

describe('customers in the dashboard', () => {
  it('when customers exist, then the list shows them newest first, filters by email and pages with cursors', async () => {
    const { accountId, test } = await t.account();
    const d = await signedIn(t, accountId, 'pager@customers.example');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await customer(test, { email: `p${i}@example.com`, first_name: `P${i}` })).id);
    const first = await d.get('/dashboard/customers');
    expect(first.status).toBe(200);
    const shown = (html: string) => [...html.matchAll(/href="\/dashboard\/customers\/(cus_[a-z0-9]+)"/g)].map((m) => m[1]);
    expect(shown(first.html)).toEqual(ids.slice(2).reverse());
    const older = /href="([^"]+starting_after=[^"]+)"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    const second = await d.get(older);
    expect(shown(second.html)).toEqual(ids.slice(0, 2).reverse());
    expect(second.html).toContain('← Newer');
    const filtered = await d.get('/dashboard/customers?email=p3%40example.com');
    expect(shown(filtered.html)).toEqual([ids[3]]);
    // The filter bar's empty field is no filter.
    expect(shown((await d.get('/dashboard/customers?email=')).html)).toEqual(ids.slice(2).reverse());
    // A bad cursor is the API's 400, as a page naming it.
    const bad = await d.get('/dashboard/customers?starting_after=nope');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('starting_after');
  });

  it('when a customer is created in the dashboard, then the API finds it with every field, and the page shows it', async () => {
    await c.get('/dashboard/customers/new');
    const res = await c.post('/dashboard/customers', {
      email: ' ada@example.com ',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+44 20 7946 0000',
      company_name: 'Engines Ltd',
      notes: 'Prefers email',
      metadata: 'tier=gold\nref = 42\n',
    });
    expect(res.status).toBe(303);
    const id = /\/dashboard\/customers\/(cus_[a-z0-9]+)\?done=created/.exec(res.location!)![1]!;
    const api = await t.request('GET', `/v1/customers/${id}`, { key: a.test });
    expect(api.body).toMatchObject({
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+44 20 7946 0000',
      company_name: 'Engines Ltd',
      notes: 'Prefers email',
      metadata: { tier: 'gold', ref: '42' },
      livemode: false,
      // The simulator's customer, made with ours as the API's create makes it: none waits for the sweep.
      processor_customer_id: simulatedCustomerId(id, false),
    });
    expect(await t.sql`select id from processor_customers_due where id = ${id}`).toHaveLength(0);
    const page = await c.get(res.location!);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Customer created.');
    expect(page.html).toContain('Engines Ltd');
  });

  it('when the email is not an email, then the form comes back with the problem beside the field and nothing is written', async () => {
    const before = await count(a.accountId);
    await c.get('/dashboard/customers/new');
    const res = await c.post('/dashboard/customers', { email: 'not-an-email', first_name: 'X' });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/id="email"[^>]*aria-invalid="true"/);
    expect(res.html).toContain('must be a valid email address');
    expect(res.html).toContain('value="X"'); // what was typed comes back
    const meta = await c.post('/dashboard/customers', { email: 'ok@example.com', metadata: 'no equals sign' });
    expect(meta.status).toBe(400);
    expect(meta.html).toContain('Line 1 of metadata is not key=value.');
    const tooMany = await c.post('/dashboard/customers', { email: 'ok@example.com', metadata: Array.from({ length: 21 }, (_, i) => `k${i}=v`).join('\n') });
    expect(tooMany.status).toBe(400);
    expect(tooMany.html).toMatch(/id="metadata"[^>]*aria-invalid="true"/);
    expect(await count(a.accountId)).toBe(before);
  });

  it('when a customer is edited, then cleared fields become null and a removed metadata line removes the key', async () => {
    const cus = await customer(a.test, { email: 'edit@example.com', first_name: 'Ed', phone: '123', metadata: { a: '1', b: '2' } });
    const form = await c.get(`/dashboard/customers/${cus.id}/edit`);
    expect(form.html).toContain('value="edit@example.com"');
    expect(form.html).toContain('a=1\nb=2');
    const res = await c.post(`/dashboard/customers/${cus.id}`, { email: 'edit@example.com', first_name: 'Edward', last_name: '', phone: '', company_name: 'Co', notes: '', metadata: 'b=3\nc=4' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/customers/${cus.id}?done=updated`);
    const api = (await t.request('GET', `/v1/customers/${cus.id}`, { key: a.test })).body;
    expect(api).toMatchObject({ first_name: 'Edward', phone: null, company_name: 'Co', notes: null, metadata: { b: '3', c: '4' } });
  });

  it('when delete is confirmed, then the customer is gone; the same form posted again does nothing more', async () => {
    const cus = await customer(a.test, { email: 'bye@example.com' });
    const confirm = await c.get(`/dashboard/customers/${cus.id}?confirm=delete`);
    expect(confirm.html).toContain('Delete this customer?');
    const key = formKey();
    const res = await c.post(`/dashboard/customers/${cus.id}/delete`, { idempotency_key: key });
    expect(res.location).toBe('/dashboard/customers?done=deleted');
    const list = await c.get(res.location!);
    expect(list.status).toBe(200);
    expect(list.html).toContain('Customer deleted.');
    expect((await t.request('GET', `/v1/customers/${cus.id}`, { key: a.test })).status).toBe(404);
    // A double click: the same key again replays the answer instead of a "not found".
    const again = await c.post(`/dashboard/customers/${cus.id}/delete`, { idempotency_key: key });
    expect(again.status).toBe(303);
    expect(again.location).toBe('/dashboard/customers?done=deleted');
    // A new form for a customer that is gone: the API's 404.
    expect((await c.post(`/dashboard/customers/${cus.id}/delete`, {})).status).toBe(404);
  });

  it('when the create form is submitted twice with its idempotency key, then one customer is created', async () => {
    const before = await count(a.accountId);
    const key = formKey();
    const first = await c.post('/dashboard/customers', { email: 'twice@example.com', idempotency_key: key });
    const second = await c.post('/dashboard/customers', { email: 'twice@example.com', idempotency_key: key });
    expect(second.location).toBe(first.location);
    expect(await count(a.accountId)).toBe(before + 1);
    // The key with other values is refused, and creates nothing.
    const other = await c.post('/dashboard/customers', { email: 'other@example.com', idempotency_key: key });
    expect(other.status).toBe(409);
    expect(await count(a.accountId)).toBe(before + 1);
  });
});

describe('customers: access control', () => {
  it("when a customer of another account or of live mode is asked for, then 404 and nothing changes", async () => {
    const theirs = await customer(b.test, { email: 'theirs@example.com' });
    const live = await customer(a.live, { email: 'live@example.com' });
    for (const id of [theirs.id, live.id]) {
      expect((await c.get(`/dashboard/customers/${id}`)).status).toBe(404);
      expect((await c.get(`/dashboard/customers/${id}/edit`)).status).toBe(404);
      await c.get('/dashboard/customers');
      expect((await c.post(`/dashboard/customers/${id}`, { email: 'hijack@example.com' })).status).toBe(404);
      expect((await c.post(`/dashboard/customers/${id}/delete`, {})).status).toBe(404);
    }
    expect((await t.request('GET', `/v1/customers/${theirs.id}`, { key: b.test })).body.email).toBe('theirs@example.com');
    expect((await t.request('GET', `/v1/customers/${live.id}`, { key: a.live })).body.email).toBe('live@example.com');
    const list = await c.get('/dashboard/customers');
    expect(list.html).not.toContain(theirs.id);
    expect(list.html).not.toContain(live.id);
  });

  it('when there is no session, or the CSRF token is wrong, or the form was opened in the other mode, then nothing is created', async () => {
    const before = await count(a.accountId);
    const anon = new DashClient(t);
    expect((await anon.get('/dashboard/customers')).location).toBe('/dashboard/sign-in');
    expect((await anon.post('/dashboard/customers', { email: 'anon@example.com' })).location).toBe('/dashboard/sign-in');
    await c.get('/dashboard/customers/new');
    expect((await c.post('/dashboard/customers', { email: 'csrf@example.com', _csrf: 'forged' })).status).toBe(403);
    const noCsrf = await c.send('POST', '/dashboard/customers', { email: 'nocsrf@example.com', form_mode: 'test', idempotency_key: formKey() });
    expect(noCsrf.status).toBe(403);
    // Opened in test, posted after switching to live in another tab: refused, nothing created in either mode.
    const d = await signedIn(t, a.accountId, 'modes@customers.example');
    await d.get('/dashboard/customers/new');
    const token = d.token;
    await d.post('/dashboard/mode', { mode: 'live', back: '/dashboard/customers' });
    const res = await d.send('POST', '/dashboard/customers', { _csrf: token, form_mode: 'test', idempotency_key: formKey(), email: 'mode@example.com' });
    expect(res.status).toBe(409);
    expect(res.html).toContain('This form was opened while viewing test data');
    expect(await count(a.accountId)).toBe(before);
  });
});
