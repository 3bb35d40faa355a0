import { beforeAll, describe, expect, it } from 'vitest';
import { nowUnix } from '../../src/lib/time.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession, SUCCESS_URL } from './helpers.ts';
import { eventObjects, eventsFor } from '../helpers/events.ts';

const t = useTestServer();
let key: string;
let liveKey: string;
let accountId: string;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  liveKey = a.live;
  accountId = a.accountId;
});

const post = (body: Record<string, unknown>, k = key) => t.request('POST', '/v1/checkout/sessions', { key: k, body });
const valid = { amount: 1999, currency: 'usd', success_url: SUCCESS_URL };

describe('POST /v1/checkout/sessions', () => {
  it('when created, then it is OPEN and unpaid, carries amount_cents, expires in 24 h and its url is $CHECKOUT_URL/<id>', async () => {
    const before = nowUnix();
    const res = await post({ ...valid, cancel_url: 'https://merchant.example/cart', customer_email: 'a@b.example', metadata: { order: '42' } });
    expect(res.status).toBe(200);
    const cs = res.body;
    expect(cs).toMatchObject({
      object: 'checkout_session',
      livemode: false,
      status: 'OPEN',
      payment_status: 'unpaid',
      amount_cents: 1999,
      currency: 'usd',
      success_url: SUCCESS_URL,
      cancel_url: 'https://merchant.example/cart',
      customer_id: null,
      customer_email: 'a@b.example',
      line_items: null,
      payment_intent_id: null,
      payment_id: null,
      completed_at: null,
      metadata: { order: '42' },
    });
    expect(cs.id).toMatch(/^cs_[0-9a-z]{29}$/);
    expect(cs).not.toHaveProperty('amount');
    expect(cs.url).toBe(`${t.s.config.checkoutUrl}/${cs.id}`);
    expect(cs.expires_at - cs.created).toBe(24 * 3600);
    expect(cs.created).toBeGreaterThanOrEqual(before);
    const [row] = await t.sql`select account_id, status, amount_cents, success_url from checkout_sessions where id = ${cs.id}`;
    expect(row).toEqual({ account_id: accountId, status: 'OPEN', amount_cents: 1999, success_url: SUCCESS_URL });
  });

  it('when created, then no expiry job is queued: its expires_at in the row is the schedule', async () => {
    const cs = await createSession(t, key);
    expect(await t.s.queues.get('session-expiry').getJob(cs.id)).toBeUndefined();
    const [row] = await t.sql<{ expires_at: Date }[]>`select expires_at from checkout_sessions where id = ${cs.id}`;
    expect(row!.expires_at.getTime()).toBe(cs.expires_at * 1000);
  });

  it('when the body carries amount_cents, then it answers 400 parameter_unknown', async () => {
    const res = await post({ ...valid, amount_cents: 1999 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_unknown', param: 'amount_cents' });
  });

  it.each([
    [{ amount: 0 }, 'amount'],
    [{ amount: -5 }, 'amount'],
    [{ amount: 12.5 }, 'amount'],
    [{ amount: '1999' }, 'amount'],
    [{ amount: undefined }, 'amount'],
    [{ currency: 'USD' }, 'currency'],
    [{ currency: 'usx' }, 'currency'],
    [{ currency: 'xxx' }, 'currency'],
    [{ currency: undefined }, 'currency'],
    [{ success_url: '/thanks' }, 'success_url'],
    [{ success_url: 'ftp://merchant.example/x' }, 'success_url'],
    [{ success_url: 'javascript:alert(1)' }, 'success_url'],
    [{ success_url: undefined }, 'success_url'],
    [{ cancel_url: 'not a url' }, 'cancel_url'],
    [{ customer_email: 'nope' }, 'customer_email'],
    [{ line_items: [{ name: 'Tea', quantity: 0, amount: 100 }] }, 'line_items[0][quantity]'],
    [{ line_items: [{ name: 'Tea', quantity: 1, amount: 1.5 }] }, 'line_items[0][amount]'],
    [{ line_items: [{ quantity: 1, amount: 100 }] }, 'line_items[0][name]'],
    [{ line_items: [{ name: 'Tea', quantity: 1, amount: 100, price: 1 }] }, 'line_items[0][price]'],
    [{ metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    [{ expires_at: 'soon' }, 'expires_at'],
  ])('when the body has %j, then it answers 400 naming %s', async (change, param) => {
    const res = await post({ ...valid, ...change });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(res.body.error.message).toBeTruthy();
  });

  it('when success_url holds {CHECKOUT_SESSION_ID}, then it is kept verbatim (in path or query)', async () => {
    const url = 'https://merchant.example/done/{CHECKOUT_SESSION_ID}?again={CHECKOUT_SESSION_ID}';
    const cs = await createSession(t, key, { success_url: url });
    expect(cs.success_url).toBe(url);
  });

  it('when cancel_url is left out, then it is null; http (not only https) URLs are accepted', async () => {
    const cs = await createSession(t, key, { success_url: 'http://localhost:8080/ok' });
    expect(cs.cancel_url).toBeNull();
    expect(cs.success_url).toBe('http://localhost:8080/ok');
  });

  it('when only line_items are sent, then amount is their sum; when both are sent and agree, then it is accepted', async () => {
    const items = [
      { name: 'Tea', quantity: 2, amount: 350 },
      { name: 'Cake', quantity: 1, amount: 500 },
    ];
    const only = await createSession(t, key, { amount: undefined, line_items: items });
    expect(only.amount_cents).toBe(1200);
    expect(only.line_items).toEqual(items);
    const both = await createSession(t, key, { amount: 1200, line_items: items });
    expect(both.amount_cents).toBe(1200);
  });

  it('when amount and line_items disagree, then it answers 400 naming amount', async () => {
    const res = await post({ ...valid, amount: 1000, line_items: [{ name: 'Tea', quantity: 2, amount: 350 }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    expect(res.body.error.message).toContain('700');
  });

  it('when the line_items add up to zero, then it answers 400 (a session charges a positive amount)', async () => {
    const res = await post({ ...valid, amount: undefined, line_items: [{ name: 'Free', quantity: 1, amount: 0 }] });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('line_items');
  });

  it('when currency is a zero-decimal or three-decimal ISO code, then it is accepted as is', async () => {
    expect((await createSession(t, key, { currency: 'jpy', amount: 500 })).currency).toBe('jpy');
    expect((await createSession(t, key, { currency: 'kwd', amount: 1500 })).currency).toBe('kwd');
  });

  it('when customer_id is a customer of the same account and mode, then it is attached', async () => {
    const cus = (await t.request('POST', '/v1/customers', { key, body: { email: 'c@example.com' } })).body;
    const cs = await createSession(t, key, { customer_id: cus.id });
    expect(cs.customer_id).toBe(cus.id);
  });

  it('when customer_id belongs to another account, to the other mode, or to nobody, then it answers 400 naming customer_id', async () => {
    const other = await t.account();
    const foreign = (await t.request('POST', '/v1/customers', { key: other.test, body: { email: 'x@example.com' } })).body;
    const live = (await t.request('POST', '/v1/customers', { key: liveKey, body: { email: 'l@example.com' } })).body;
    for (const id of [foreign.id, live.id, 'cus_00000000000000000000000000', 'garbage']) {
      const res = await post({ ...valid, customer_id: id });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'customer_id' });
    }
  });

  it('when expires_at is within [creation + CHECKOUT_MIN_EXPIRY_SECONDS, creation + 24 h], then it is kept', async () => {
    const at = nowUnix() + 2 * 3600;
    expect((await createSession(t, key, { expires_at: at })).expires_at).toBe(at);
  });

  it.each([
    ['sooner than the minimum', () => nowUnix() + t.s.config.checkoutMinExpirySeconds - 60],
    ['in the past', () => nowUnix() - 10],
    ['later than 24 hours', () => nowUnix() + 24 * 3600 + 60],
  ])('when expires_at is %s, then it answers 400 naming expires_at', async (_, at) => {
    const res = await post({ ...valid, expires_at: at() });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'expires_at' });
  });

  it('when created with a live key, then it is a live session invisible to the test key', async () => {
    const cs = await createSession(t, liveKey);
    expect(cs.livemode).toBe(true);
    expect((await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).status).toBe(404);
    expect((await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key: liveKey })).status).toBe(200);
  });

  it('when the same Idempotency-Key is sent twice, then one session exists', async () => {
    const headers = { 'Idempotency-Key': `idem-${Math.random()}` };
    const a = await t.request('POST', '/v1/checkout/sessions', { key, body: valid, headers });
    const b = await t.request('POST', '/v1/checkout/sessions', { key, body: valid, headers });
    expect(b.body.id).toBe(a.body.id);
  });
});

describe('GET /v1/checkout/sessions/:id', () => {
  it('when the id is of another account or unknown, then it answers 404 resource_missing', async () => {
    const cs = await createSession(t, key);
    const other = await t.account();
    for (const [k, id] of [[other.test, cs.id], [key, 'cs_00000000000000000000000000'], [key, 'nope']] as const) {
      const res = await t.request('GET', `/v1/checkout/sessions/${id}`, { key: k });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    }
  });

  it('when read after expires_at, then it is already EXPIRED, with exactly one checkout.session.expired event', async () => {
    const cs = await createSession(t, key);
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 second' where id = ${cs.id}`;
    const first = await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key });
    expect(first.body.status).toBe('EXPIRED');
    const second = await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key });
    expect(second.body.status).toBe('EXPIRED');
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    const [row] = await t.sql`select status from checkout_sessions where id = ${cs.id}`;
    expect(row!.status).toBe('EXPIRED');
  });
});

describe('GET /v1/checkout/sessions', () => {
  it('when listed, then newest first, filtered by status and customer_id, and the cursor walks the filtered set', async () => {
    const a = await t.account();
    const cus = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'f@example.com' } })).body;
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createSession(t, a.test, { customer_id: i % 2 === 0 ? cus.id : null }));
    await t.request('POST', `/v1/checkout/sessions/${made[0].id}/expire`, { key: a.test });

    const all = await t.request('GET', '/v1/checkout/sessions?limit=10', { key: a.test });
    expect(all.body).toMatchObject({ object: 'list', has_more: false, url: '/v1/checkout/sessions' });
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual(made.map((s) => s.id).reverse());

    const open = await t.request('GET', '/v1/checkout/sessions?status=OPEN&limit=2', { key: a.test });
    expect(open.body.data.map((s: { id: string }) => s.id)).toEqual([made[4].id, made[3].id]);
    expect(open.body.has_more).toBe(true);
    const next = await t.request('GET', `/v1/checkout/sessions?status=OPEN&limit=2&starting_after=${made[3].id}`, { key: a.test });
    expect(next.body.data.map((s: { id: string }) => s.id)).toEqual([made[2].id, made[1].id]);
    expect(next.body.has_more).toBe(false);

    const expired = await t.request('GET', '/v1/checkout/sessions?status=EXPIRED', { key: a.test });
    expect(expired.body.data.map((s: { id: string }) => s.id)).toEqual([made[0].id]);

    const byCustomer = await t.request('GET', `/v1/checkout/sessions?customer_id=${cus.id}`, { key: a.test });
    expect(byCustomer.body.data.map((s: { id: string }) => s.id)).toEqual([made[4].id, made[2].id, made[0].id]);
    const back = await t.request('GET', `/v1/checkout/sessions?customer_id=${cus.id}&ending_before=${made[0].id}&limit=1`, { key: a.test });
    expect(back.body.data.map((s: { id: string }) => s.id)).toEqual([made[2].id]);
  });

  it('when a status filter is not a session status, then it answers 400 naming status', async () => {
    const res = await t.request('GET', '/v1/checkout/sessions?status=PAID', { key });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('status');
  });

  it('when listing after a session passed expires_at, then the list already shows it EXPIRED', async () => {
    const a = await t.account();
    const cs = await createSession(t, a.test);
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 second' where id = ${cs.id}`;
    const open = await t.request('GET', '/v1/checkout/sessions?status=OPEN', { key: a.test });
    expect(open.body.data).toEqual([]);
    const all = await t.request('GET', '/v1/checkout/sessions', { key: a.test });
    expect(all.body.data[0]).toMatchObject({ id: cs.id, status: 'EXPIRED' });
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
  });
});

describe('POST /v1/checkout/sessions/:id/expire', () => {
  it('when the session is OPEN, then it becomes EXPIRED now, answers the session, records the event', async () => {
    const cs = await createSession(t, key);
    const res = await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: cs.id, object: 'checkout_session', status: 'EXPIRED', payment_status: 'unpaid' });
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    const [event] = await eventObjects(t, cs.id);
    expect(event!.object).toEqual(res.body);
    expect(await t.s.queues.get('session-expiry').getJob(cs.id)).toBeUndefined();
  });

  it('when the session is already EXPIRED, then it answers 400 invalid_request_error naming the status, and no second event', async () => {
    const cs = await createSession(t, key);
    await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
    const res = await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.message).toContain('EXPIRED');
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
  });

  it('when the session of another account is expired, then it answers 404 and the session stays OPEN', async () => {
    const cs = await createSession(t, key);
    const other = await t.account();
    expect((await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key: other.test })).status).toBe(404);
    const [row] = await t.sql`select status from checkout_sessions where id = ${cs.id}`;
    expect(row!.status).toBe('OPEN');
  });

  it('when the body carries a field, then it answers 400 parameter_unknown', async () => {
    const cs = await createSession(t, key);
    const res = await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key, body: { now: true } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('parameter_unknown');
  });
});
