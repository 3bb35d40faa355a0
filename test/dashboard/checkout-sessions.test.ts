import { beforeAll, describe, expect, it } from 'vitest';
import { eventsFor } from '../helpers/events.ts';
import { Payer, payThroughLink } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { createLink, createSession } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer();
let a: { accountId: string; test: string; live: string };
let b: { accountId: string; test: string; live: string };
let c: DashClient;

const statusOf = async (id: string) => (await t.sql`select status from checkout_sessions where id = ${id}`)[0]!.status as string;
const shown = (html: string) => [...html.matchAll(/href="\/dashboard\/checkout-sessions\/(cs_[a-z0-9]+)"/g)].map((m) => m[1]);

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  c = await signedIn(t, a.accountId, 'owner@sessions.example');
});

describe('checkout sessions in the dashboard: the list', () => {
  it('when sessions exist, then the list shows them newest first with their columns, filters by status and customer, and pages with cursors', async () => {
    const { accountId, test } = await t.account();
    const d = await signedIn(t, accountId, 'pager@sessions.example');
    const cus = (await t.request('POST', '/v1/customers', { key: test, body: { email: 'grace@example.com' } })).body;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await createSession(t, test, { amount: 1000 + i, customer_email: `p${i}@example.com` })).id);
    const withCustomer = await createSession(t, test, { amount: 4200, customer_id: cus.id });
    await new Payer(t).pay(ids[0]!);

    const first = await d.get('/dashboard/checkout-sessions');
    expect(first.status).toBe(200);
    expect(shown(first.html)).toEqual([withCustomer.id, ...ids.slice(3).reverse()]);
    expect(first.html).toContain('$42.00');
    expect(first.html).toContain('p11@example.com');
    expect(first.html).toContain('OPEN');
    expect(first.html).toContain('Unpaid');
    const older = /href="([^"]+starting_after=[^"]+)"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    const second = await d.get(older);
    expect(shown(second.html)).toEqual(ids.slice(0, 3).reverse());
    expect(second.html).toContain('← Newer');
    const newer = /href="([^"]+ending_before=[^"]+)"/.exec(second.html)![1]!.replaceAll('&amp;', '&');
    expect(shown((await d.get(newer)).html)).toEqual(shown(first.html));

    const complete = await d.get('/dashboard/checkout-sessions?status=COMPLETE');
    expect(shown(complete.html)).toEqual([ids[0]]);
    expect(complete.html).toContain('Paid');
    const byCustomer = await d.get(`/dashboard/checkout-sessions?customer_id=${cus.id}`);
    expect(shown(byCustomer.html)).toEqual([withCustomer.id]);
    const none = await d.get('/dashboard/checkout-sessions?status=EXPIRED');
    expect(none.html).toContain('No checkout session matches these filters.');

    // A bad filter or cursor is the API's 400, as a page naming it.
    const bad = await d.get('/dashboard/checkout-sessions?status=SIDEWAYS');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('status');
    expect((await d.get('/dashboard/checkout-sessions?starting_after=pay_x')).status).toBe(400);
  });

  it('when the list is read, then only the session’s account and mode are shown', async () => {
    const mine = await createSession(t, a.test, { amount: 1111 });
    const theirs = await createSession(t, b.test, { amount: 2222 });
    const live = await createSession(t, a.live, { amount: 3333 });
    const list = await c.get('/dashboard/checkout-sessions?limit=100');
    expect(shown(list.html)).toContain(mine.id);
    expect(shown(list.html)).not.toContain(theirs.id);
    expect(shown(list.html)).not.toContain(live.id);
  });
});

describe('checkout sessions in the dashboard: a session', () => {
  it('when a session has line items, a customer, metadata and attempts, then its page shows every field and links to them', async () => {
    const cus = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'ada@example.com' } })).body;
    const cs = await createSession(t, a.test, {
      amount: undefined,
      line_items: [
        { name: 'Green tea, 100 g', quantity: 2, amount: 850 },
        { name: 'Teapot', quantity: 1, amount: 3200 },
      ],
      customer_id: cus.id,
      customer_email: 'ada@example.com',
      cancel_url: 'https://merchant.example/cart',
      description: 'Order #1042',
      metadata: { order: '1042' },
    });
    await new Payer(t).pay(cs.id, { card_number: CARDS.declined });
    await new Payer(t).pay(cs.id);
    const [paid] = await t.sql`select payment_id from checkout_sessions where id = ${cs.id}`;

    const page = await c.get(`/dashboard/checkout-sessions/${cs.id}`);
    expect(page.status).toBe(200);
    for (const text of [
      cs.id,
      '$49.00',
      'COMPLETE',
      'Paid',
      'Green tea, 100 g',
      'Teapot',
      '$17.00',
      `href="/dashboard/customers/${cus.id}"`,
      'ada@example.com',
      `data-copy="${cs.url}"`,
      'https://merchant.example/thanks?session={CHECKOUT_SESSION_ID}',
      'https://merchant.example/cart',
      'Order #1042',
      'order=1042',
      `href="/dashboard/payments/${paid!.payment_id}"`,
      'The API',
      'Your card was declined.',
      'Visa •••• 4242',
    ]) {
      expect(page.html, text).toContain(text);
    }
    // Both attempts, the declined one and the one that paid.
    const attempts = await t.sql`select id, status from payments where checkout_session_id = ${cs.id}`;
    expect(attempts).toHaveLength(2);
    for (const p of attempts) expect(page.html).toContain(`href="/dashboard/payments/${p.id}"`);
    expect(page.html).toContain('FAILED');
    expect(page.html).toContain('SUCCEEDED');
    // A complete session offers no expiry.
    expect(page.html).not.toContain('?confirm=expire');
  });

  it('when a session came from a payment link, then its page names the link (internal name) and the source, linking to the link’s page', async () => {
    const link = await createLink(t, a.test, { name: 'Spring concert', description: 'Tickets' });
    const { sessionId } = await payThroughLink(t, `${link.url}?src=WHATSAPP`);
    const page = await c.get(`/dashboard/checkout-sessions/${sessionId}`);
    expect(page.html).toContain(`<a href="/dashboard/payment-links/${link.id}">Spring concert</a>`);
    expect(page.html).toContain('source WHATSAPP');
  });

  it('when the id is unknown, malformed, another account’s or the other mode’s, then the page is a 404', async () => {
    const theirs = await createSession(t, b.test);
    const live = await createSession(t, a.live);
    for (const id of ['cs_00000000000000000000000000', 'nope', theirs.id, live.id]) {
      const res = await c.get(`/dashboard/checkout-sessions/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.html).toContain('Not found');
    }
  });
});

describe('checkout sessions in the dashboard: expiring', () => {
  it('when an OPEN session is expired through the confirmation, then it is EXPIRED with one checkout.session.expired event, as the API does', async () => {
    const cs = await createSession(t, a.test);
    const page = await c.get(`/dashboard/checkout-sessions/${cs.id}`);
    expect(page.html).toContain(`href="/dashboard/checkout-sessions/${cs.id}?confirm=expire"`);
    const confirm = await c.get(`/dashboard/checkout-sessions/${cs.id}?confirm=expire`);
    expect(confirm.html).toContain('Expire this checkout session?');
    expect(confirm.html).toContain(`action="/dashboard/checkout-sessions/${cs.id}/expire"`);
    const res = await c.post(`/dashboard/checkout-sessions/${cs.id}/expire`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/checkout-sessions/${cs.id}?done=expired`);
    expect(await statusOf(cs.id)).toBe('EXPIRED');
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    const after = await c.get(res.location!);
    expect(after.html).toContain('The checkout session is expired');
    expect(after.html).toContain('EXPIRED');
    expect(after.html).not.toContain('?confirm=expire');
    const api = await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key: a.test });
    expect(api.body.status).toBe('EXPIRED');
  });

  it('when a COMPLETE session is expired, then the API’s refusal is shown and nothing changes', async () => {
    const cs = await createSession(t, a.test);
    await new Payer(t).pay(cs.id);
    await c.get(`/dashboard/checkout-sessions/${cs.id}`);
    const before = await eventsFor(t, cs.id);
    const res = await c.post(`/dashboard/checkout-sessions/${cs.id}/expire`, {});
    expect(res.status).toBe(400);
    expect(res.html).toContain('Only an OPEN checkout session can be expired; this one is COMPLETE.');
    expect(res.html).toContain(cs.id);
    expect(await statusOf(cs.id)).toBe('COMPLETE');
    expect(await eventsFor(t, cs.id)).toEqual(before);
    expect(before).not.toContain('checkout.session.expired');
  });

  it('when the same expiry is submitted twice, then it acts once and the second answer goes where the first went', async () => {
    const cs = await createSession(t, a.test);
    await c.get(`/dashboard/checkout-sessions/${cs.id}?confirm=expire`);
    const key = formKey();
    const first = await c.post(`/dashboard/checkout-sessions/${cs.id}/expire`, { idempotency_key: key });
    const second = await c.post(`/dashboard/checkout-sessions/${cs.id}/expire`, { idempotency_key: key });
    expect(first.status).toBe(303);
    expect(second.status).toBe(303);
    expect(second.location).toBe(first.location);
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
  });

  it('when another account’s or the other mode’s session is expired, then 404 and it stays OPEN', async () => {
    const theirs = await createSession(t, b.test);
    const live = await createSession(t, a.live);
    await c.get('/dashboard/checkout-sessions');
    for (const id of [theirs.id, live.id]) {
      const res = await c.post(`/dashboard/checkout-sessions/${id}/expire`, {});
      expect(res.status, id).toBe(404);
      expect(await statusOf(id)).toBe('OPEN');
      expect(await eventsFor(t, id)).toEqual([]);
    }
  });

  it('when there is no session, a wrong or missing CSRF token, or the mode changed since the form was opened, then nothing changes', async () => {
    const cs = await createSession(t, a.test);
    const anon = new DashClient(t);
    expect((await anon.get(`/dashboard/checkout-sessions/${cs.id}`)).location).toBe('/dashboard/sign-in');
    const anonPost = await anon.post(`/dashboard/checkout-sessions/${cs.id}/expire`, {});
    expect(anonPost.status).toBe(303);
    expect(anonPost.location).toBe('/dashboard/sign-in');
    expect((await anon.get('/dashboard/checkout-sessions')).location).toBe('/dashboard/sign-in');

    const d = await signedIn(t, a.accountId, 'csrf@sessions.example');
    await d.get(`/dashboard/checkout-sessions/${cs.id}?confirm=expire`);
    expect((await d.post(`/dashboard/checkout-sessions/${cs.id}/expire`, { _csrf: 'forged' })).status).toBe(403);
    const missing = await d.send('POST', `/dashboard/checkout-sessions/${cs.id}/expire`, { form_mode: 'test', idempotency_key: formKey() });
    expect(missing.status).toBe(403);
    expect(await statusOf(cs.id)).toBe('OPEN');

    // A form opened on test data, posted after switching this session to live data.
    await d.post('/dashboard/mode', { mode: 'live', back: '/dashboard/checkout-sessions' });
    const stale = await d.post(`/dashboard/checkout-sessions/${cs.id}/expire`, { form_mode: 'test' });
    expect(stale.status).toBe(409);
    expect(stale.html).toContain('The mode has changed');
    expect(await statusOf(cs.id)).toBe('OPEN');
    expect(await eventsFor(t, cs.id)).toEqual([]);
  });
});
