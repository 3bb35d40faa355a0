import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, MAX_UNIX_SECONDS } from '../../src/lib/validate.ts';
import { useTestServer } from '../helpers/server.ts';
import { nestedText } from './hostile.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { createLink, createSession } from '../helpers/factories.ts';

// The inputs issue 9 found answering 500, each now a 400 naming its parameter.
const t = useTestServer();
let key: string;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
});

const json = (path: string, body: unknown, headers: Record<string, string> = {}) => t.request('POST', path, { key, body, headers });
const expectInvalid = (res: { status: number; body: any; headers: Headers }, param: string | undefined) => {
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid' });
  expect(res.body.error.param).toBe(param);
  expect(res.headers.get('request-id')).toMatch(/^req_/);
};

describe('hosted pages', () => {
  it('when the checkout form holds a NUL in the name or the email, then 400 with the message beside that field, and no payment', async () => {
    const session = await createSession(t, key);
    const payer = new Payer(t);
    const name = await payer.pay(session.id, { name: 'Ada\u0000Lovelace' });
    expect(name.status).toBe(400);
    expect(name.html).toMatch(/id="name-error">The name contains a NUL character/);
    expect(name.html).not.toContain('\u0000');
    const email = await payer.pay(session.id, { email: 'a\u0000@example.com' });
    expect(email.status).toBe(400);
    expect(email.html).toMatch(/id="email-error">The email contains a NUL character/);
    expect(await t.sql`select 1 from payments where checkout_session_id = ${session.id}`).toHaveLength(0);
  });

  it('when the authenticate page gets a NUL in ?payment=, then a 400 page names the parameter', async () => {
    const session = await createSession(t, key);
    const page = await new Payer(t).get(`/checkout/${session.id}/authenticate?payment=%00`);
    expect(page.status).toBe(400);
    expect(page.html).toContain('The link parameter “payment” contains a NUL character');
  });

  it('when a payment-link form holds a NUL in a collected field or an uncollected one, then 400 naming it, and no session', async () => {
    const link = await createLink(t, key, { collect_name: true, collect_email: false, collect_phone: false });
    const payer = new Payer(t);
    await payer.get(pathOf(link.url));
    const collected = await payer.post(pathOf(link.url), { name: 'Ada\u0000' });
    expect(collected.status).toBe(400);
    expect(collected.html).toMatch(/Your name contains a NUL character/);
    const other = await payer.post(pathOf(link.url), { name: 'Ada', phone: '\u0000' });
    expect(other.status).toBe(400);
    expect(other.html).toContain('The form field “phone” contains a NUL character');
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(0);
  });
});

describe('API bodies and queries', () => {
  it('when metadata or a line item name holds a lone surrogate, then 400 naming it, and nothing is stored', async () => {
    expectInvalid(await json('/v1/customers', { email: 'lone@example.com', metadata: { note: 'x\ud800' } }), 'metadata[note]');
    expectInvalid(await json('/v1/customers', { email: 'lone@example.com', metadata: { ['k\udc00']: 'v' } }), 'metadata[k\udc00]');
    const items = await json('/v1/checkout/sessions', { currency: 'usd', success_url: 'https://m.example/surrogate', line_items: [{ name: '\ud83d', quantity: 1, amount: 100 }] });
    expectInvalid(items, 'line_items[0][name]');
    expect(items.body.error.message).toMatch(/unpaired UTF-16 surrogate/);
    expect(await t.sql`select 1 from customers where email = 'lone@example.com'`).toHaveLength(0);
    expect(await t.sql`select 1 from checkout_sessions where success_url = 'https://m.example/surrogate'`).toHaveLength(0);
  });

  it('when a query value holds a NUL, then 400 naming the parameter', async () => {
    expectInvalid(await t.request('GET', '/v1/customers?email=a%00b', { key }), 'email');
  });

  it(`when a body nests deeper than ${MAX_BODY_DEPTH} levels (10,000 here, with an Idempotency-Key), then 400 naming the top field, and the key is not taken`, async () => {
    const body = `{"email":"deep@example.com","metadata":${nestedText(10_000)}}`;
    const res = await t.request('POST', '/v1/customers', { key, rawBody: body, headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-1' } });
    expectInvalid(res, 'metadata');
    expect(res.body.error.message).toContain(`more than ${MAX_BODY_DEPTH} levels deep`);
    expect(await t.sql`select 1 from idempotency_keys where key = 'deep-1'`).toHaveLength(0);
    expect(await t.sql`select 1 from customers where email = 'deep@example.com'`).toHaveLength(0);
  });

  it(`when a body nests exactly ${MAX_BODY_DEPTH} levels, then the depth is accepted and the schema answers`, async () => {
    // {"metadata": 31 more levels}: 32 in all, so the schema (not the depth check) refuses it.
    const body = `{"email":"d32@example.com","metadata":{"k":${'['.repeat(MAX_BODY_DEPTH - 2)}1${']'.repeat(MAX_BODY_DEPTH - 2)}}}`;
    const res = await t.request('POST', '/v1/customers', { key, rawBody: body, headers: { 'content-type': 'application/json' } });
    expectInvalid(res, 'metadata[k]');
    expect(res.body.error.message).not.toContain('levels deep');
  });

  it(`when a payment link's expires_at is past ${MAX_UNIX_SECONDS}, then 400 expires_at; at the bound it is stored as 9999-12-31`, async () => {
    for (const expires_at of [MAX_UNIX_SECONDS + 1, 100_000_000_000_000, 8.64e15]) {
      expectInvalid(await json('/v1/payment-links', { amount: 100, currency: 'usd', expires_at }), 'expires_at');
    }
    const ok = await json('/v1/payment-links', { amount: 100, currency: 'usd', expires_at: MAX_UNIX_SECONDS });
    expect(ok.status).toBe(200);
    const [row] = await t.sql<{ expires_at: Date }[]>`select expires_at from payment_links where id = ${ok.body.id}`;
    expect(row!.expires_at.toISOString()).toBe('9999-12-31T23:59:59.000Z');
    const patch = await t.request('PATCH', `/v1/payment-links/${ok.body.id}`, { key, body: { expires_at: 253_402_300_800 } });
    expectInvalid(patch, 'expires_at');
  });

  it('when a checkout session expires_at is out of every range, then 400 expires_at', async () => {
    const res = await json('/v1/checkout/sessions', { amount: 100, currency: 'usd', success_url: 'https://m.example/ok', expires_at: 100_000_000_000_000 });
    expectInvalid(res, 'expires_at');
  });

  it('when events are filtered by created past the bound, then 400 naming the filter; at the bound, 200', async () => {
    expectInvalid(await t.request('GET', '/v1/events?created[gte]=100000000000000', { key }), 'created[gte]');
    expectInvalid(await t.request('GET', '/v1/events?created[lte]=1e3', { key }), 'created[lte]');
    expectInvalid(await t.request('GET', '/v1/events?created[gte]=-1', { key }), 'created[gte]');
    const ok = await t.request('GET', `/v1/events?created[gte]=0&created[lte]=${MAX_UNIX_SECONDS}`, { key });
    expect(ok.status).toBe(200);
  });
});
