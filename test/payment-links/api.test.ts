import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventsFor } from '../helpers/events.ts';

const t = useTestServer();
let key: string;
let accountId: string;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  accountId = a.accountId;
});

const create = (body: Record<string, unknown>, k = key) =>
  t.request('POST', '/v1/payment-links', { key: k, body: { amount: 2500, currency: 'usd', ...body } });
const patch = (id: string, body: Record<string, unknown>, k = key) => t.request('PATCH', `/v1/payment-links/${id}`, { key: k, body });
const slug = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

/** A successful payment on the link, written the way checkout writes one. */
async function paid(linkId: string, amount = 2500, source = 'DIRECT') {
  const id = newId('pay');
  await t.sql`
    insert into payments (id, account_id, livemode, status, amount_cents, currency, payment_link_id, link_source, succeeded_at)
    values (${id}, ${accountId}, false, 'SUCCEEDED', ${amount}, 'usd', ${linkId}, ${source}, now())`;
  return id;
}

describe('POST /v1/payment-links', () => {
  it('when created with amount, then it answers amount_cents, ACTIVE, zero counters and a url under PUBLIC_LINK_URL', async () => {
    const res = await create({ name: 'T-shirt', description: 'Blue, size M', collect_email: true });
    expect(res.status).toBe(200);
    const link = res.body;
    expect(link).toMatchObject({
      object: 'payment_link',
      livemode: false,
      type: 'MULTI',
      status: 'ACTIVE',
      amount_cents: 2500,
      currency: 'usd',
      name: 'T-shirt',
      description: 'Blue, size M',
      slug: null,
      collect_name: false,
      collect_email: true,
      collect_phone: false,
      installment_enabled: false,
      quantity_limit: null,
      view_count: 0,
      payment_count: 0,
      total_collected_cents: 0,
      expires_at: null,
      metadata: {},
    });
    expect(link.id).toMatch(/^pl_/);
    expect(link.url).toBe(`${t.url}/l/${link.id}`);
    expect(link).not.toHaveProperty('amount');
    const [row] = await t.sql`select amount_cents, account_id from payment_links where id = ${link.id}`;
    expect(row).toEqual({ amount_cents: 2500, account_id: accountId });
    // Spec 6.2 has no payment_link event types: none is recorded.
    expect(await eventsFor(t, link.id)).toEqual([]);
  });

  it('when the body carries amount_cents, then it answers 400 parameter_unknown', async () => {
    const res = await t.request('POST', '/v1/payment-links', { key, body: { amount_cents: 100, currency: 'usd' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_unknown', param: 'amount_cents' });
  });

  it.each([
    [{ amount: undefined }, 'parameter_missing', 'amount'],
    [{ currency: undefined }, 'parameter_missing', 'currency'],
    [{ amount: 0 }, 'parameter_invalid', 'amount'],
    [{ amount: 12.5 }, 'parameter_invalid', 'amount'],
    [{ currency: 'USD' }, 'parameter_invalid', 'currency'],
    [{ type: 'ONCE' }, 'parameter_invalid', 'type'],
    [{ slug: 'ab' }, 'parameter_invalid', 'slug'],
    [{ slug: 'Has-Capitals' }, 'parameter_invalid', 'slug'],
    [{ slug: 'a'.repeat(65) }, 'parameter_invalid', 'slug'],
    [{ slug: 'under_score' }, 'parameter_invalid', 'slug'],
    [{ quantity_limit: 0 }, 'parameter_invalid', 'quantity_limit'],
    [{ type: 'SINGLE', quantity_limit: 3 }, 'parameter_invalid', 'quantity_limit'],
    [{ expires_at: Math.floor(Date.now() / 1000) - 10 }, 'parameter_invalid', 'expires_at'],
    [{ view_count: 5 }, 'parameter_unknown', 'view_count'],
    [{ status: 'CANCELLED' }, 'parameter_unknown', 'status'],
    [{ customer_id: 'cus_nope' }, 'parameter_invalid', 'customer_id'],
  ])('when the body is %j, then it answers 400 %s naming %s', async (body, code, param) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it('when a slug is given, then the url ends with the slug', async () => {
    const s = slug('summer-sale');
    const res = await create({ slug: s });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe(`${t.url}/l/${s}`);
  });

  // Slugs across accounts and modes: test/payment-links/slugs.test.ts.
  it('when the slug is taken in the same account and mode, then it answers 400 with param slug', async () => {
    const s = slug('taken');
    expect((await create({ slug: s })).status).toBe(200);
    const res = await create({ slug: s });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'slug' });
    const other = await create({});
    const moved = await patch(other.body.id, { slug: s });
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe('slug');
  });

  it('when customer_id names a customer of this account and mode, then it is attached; of another mode, then 400', async () => {
    const cus = await t.request('POST', '/v1/customers', { key, body: { email: 'a@example.com' } });
    const ok = await create({ customer_id: cus.body.id });
    expect(ok.status).toBe(200);
    expect(ok.body.customer_id).toBe(cus.body.id);
    const live = await t.key(accountId, 'live');
    const res = await create({ customer_id: cus.body.id }, live);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'customer_id' });
  });
});

describe('GET /v1/payment-links/:id', () => {
  it('when the link exists, then it is answered; with the live key or another account, then 404', async () => {
    const link = (await create({})).body;
    const res = await t.request('GET', `/v1/payment-links/${link.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(link);
    const live = await t.key(accountId, 'live');
    expect((await t.request('GET', `/v1/payment-links/${link.id}`, { key: live })).status).toBe(404);
    const other = await t.account();
    const res404 = await t.request('GET', `/v1/payment-links/${link.id}`, { key: other.test });
    expect(res404.status).toBe(404);
    expect(res404.body.error.code).toBe('resource_missing');
  });
});

describe('GET /v1/payment-links', () => {
  it('when listed with filters, then it pages newest first through the filtered set', async () => {
    const a = await t.account();
    const make = (body: Record<string, unknown>) => create(body, a.test).then((r) => r.body);
    const m1 = await make({ type: 'MULTI' });
    const s1 = await make({ type: 'SINGLE' });
    const m2 = await make({ type: 'MULTI' });
    const m3 = await make({ type: 'MULTI' });
    await patch(m2.id, { status: 'CANCELLED' }, a.test);

    const all = await t.request('GET', '/v1/payment-links?limit=10', { key: a.test });
    expect(all.body.data.map((l: { id: string }) => l.id)).toEqual([m3.id, m2.id, s1.id, m1.id]);
    expect(all.body).toMatchObject({ object: 'list', has_more: false, url: '/v1/payment-links' });

    const multi = await t.request('GET', '/v1/payment-links?type=MULTI&limit=2', { key: a.test });
    expect(multi.body.data.map((l: { id: string }) => l.id)).toEqual([m3.id, m2.id]);
    expect(multi.body.has_more).toBe(true);
    const next = await t.request('GET', `/v1/payment-links?type=MULTI&limit=2&starting_after=${m2.id}`, { key: a.test });
    expect(next.body.data.map((l: { id: string }) => l.id)).toEqual([m1.id]);
    expect(next.body.has_more).toBe(false);

    const cancelled = await t.request('GET', '/v1/payment-links?status=CANCELLED', { key: a.test });
    expect(cancelled.body.data.map((l: { id: string }) => l.id)).toEqual([m2.id]);
    const active = await t.request('GET', '/v1/payment-links?status=ACTIVE&type=MULTI', { key: a.test });
    expect(active.body.data.map((l: { id: string }) => l.id)).toEqual([m3.id, m1.id]);

    const bad = await t.request('GET', '/v1/payment-links?status=EXPIRED', { key: a.test });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status');
  });
});

describe('PATCH /v1/payment-links/:id', () => {
  it('when fields are edited, then it answers the updated link and records no event', async () => {
    const link = (await create({ metadata: { a: '1' } })).body;
    const res = await patch(link.id, { name: 'New name', collect_phone: true, metadata: { b: '2' }, quantity_limit: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: link.id, name: 'New name', collect_phone: true, metadata: { a: '1', b: '2' }, quantity_limit: 10 });
    const [row] = await t.sql`select name, quantity_limit from payment_links where id = ${link.id}`;
    expect(row).toEqual({ name: 'New name', quantity_limit: 10 });
    expect(await eventsFor(t, link.id)).toEqual([]);
  });

  it('when the status goes CANCELLED then ACTIVE, then the link is deactivated and reactivated', async () => {
    const link = (await create({})).body;
    const off = await patch(link.id, { status: 'CANCELLED' });
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('CANCELLED');
    const on = await patch(link.id, { status: 'ACTIVE' });
    expect(on.body.status).toBe('ACTIVE');
    const bad = await patch(link.id, { status: 'COMPLETED' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status');
  });

  it('when a cancelled link has expired, then it cannot be reactivated', async () => {
    const link = (await create({})).body;
    await patch(link.id, { status: 'CANCELLED' });
    await t.sql`update payment_links set expires_at = now() - interval '1 minute' where id = ${link.id}`;
    const res = await patch(link.id, { status: 'ACTIVE' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('resource_invalid_state');
    const res2 = await patch(link.id, { expires_at: Math.floor(Date.now() / 1000) + 3600 });
    expect(res2.status).toBe(400);
  });

  it('when a COMPLETED link is reactivated or cancelled, then it answers 400 and stays COMPLETED', async () => {
    const link = (await create({ type: 'SINGLE' })).body;
    await paid(link.id);
    await t.sql`update payment_links set status = 'COMPLETED' where id = ${link.id}`;
    for (const status of ['ACTIVE', 'CANCELLED']) {
      const res = await patch(link.id, { status });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('resource_invalid_state');
    }
    const [row] = await t.sql`select status from payment_links where id = ${link.id}`;
    expect(row!.status).toBe('COMPLETED');
  });

  it('when the link has a payment, then amount, currency and type are frozen but other fields still change', async () => {
    const link = (await create({ quantity_limit: 5 })).body;
    expect((await patch(link.id, { amount: 3000 })).body.amount_cents).toBe(3000);
    await paid(link.id, 3000);
    for (const [param, value] of [['amount', 4000], ['currency', 'eur'], ['type', 'SINGLE']] as const) {
      const res = await patch(link.id, { [param]: value });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param });
    }
    const same = await patch(link.id, { amount: 3000, currency: 'usd', type: 'MULTI', description: 'still editable' });
    expect(same.status).toBe(200);
    expect(same.body.description).toBe('still editable');
  });

  it('when quantity_limit goes below the payments made, then 400; down to exactly them, then the link is COMPLETED', async () => {
    const link = (await create({ quantity_limit: 5 })).body;
    await paid(link.id);
    await paid(link.id);
    const below = await patch(link.id, { quantity_limit: 1 });
    expect(below.status).toBe(400);
    expect(below.body.error.param).toBe('quantity_limit');
    const zero = await patch(link.id, { quantity_limit: 0 });
    expect(zero.body.error).toMatchObject({ code: 'parameter_invalid', param: 'quantity_limit' });
    const exact = await patch(link.id, { quantity_limit: 2 });
    expect(exact.status).toBe(200);
    expect(exact.body).toMatchObject({ quantity_limit: 2, status: 'COMPLETED' });
    const raise = await patch(link.id, { quantity_limit: 10 });
    expect(raise.status).toBe(400);
  });

  it('when expires_at is set in the past, then 400; in the future or null, then it is saved', async () => {
    const link = (await create({})).body;
    const past = await patch(link.id, { expires_at: Math.floor(Date.now() / 1000) - 1 });
    expect(past.body.error).toMatchObject({ code: 'parameter_invalid', param: 'expires_at' });
    const at = Math.floor(Date.now() / 1000) + 3600;
    expect((await patch(link.id, { expires_at: at })).body.expires_at).toBe(at);
    expect((await patch(link.id, { expires_at: null })).body.expires_at).toBe(null);
  });

  it('when the id is unknown or of another account, then 404', async () => {
    const link = (await create({})).body;
    const other = await t.account();
    expect((await patch(link.id, { name: 'x' }, other.test)).status).toBe(404);
    expect((await patch('pl_nope', { name: 'x' })).status).toBe(404);
  });
});

describe('GET /v1/payment-links/:id/analytics', () => {
  it('when views and payments came from several sources, then it answers totals per source', async () => {
    const link = (await create({})).body;
    await paid(link.id, 2500, 'QR');
    await paid(link.id, 2500, 'QR');
    await paid(link.id, 2500, 'WHATSAPP');
    await t.sql`
      insert into payment_link_views (id, payment_link_id, account_id, livemode, source, created_at)
      values (${newId('plv')}, ${link.id}, ${accountId}, false, 'QR', now()),
             (${newId('plv')}, ${link.id}, ${accountId}, false, 'DIRECT', now())`;
    const res = await t.request('GET', `/v1/payment-links/${link.id}/analytics`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'payment_link_analytics',
      payment_link: link.id,
      livemode: false,
      currency: 'usd',
      views: 2,
      payments: 3,
      amount_collected_cents: 7500,
      amount_refunded_cents: 0,
      net_collected_cents: 7500,
      sources: [
        { source: 'DIRECT', views: 1, payments: 0, amount_collected_cents: 0, amount_refunded_cents: 0, net_collected_cents: 0 },
        { source: 'EMBED', views: 0, payments: 0, amount_collected_cents: 0, amount_refunded_cents: 0, net_collected_cents: 0 },
        { source: 'WHATSAPP', views: 0, payments: 1, amount_collected_cents: 2500, amount_refunded_cents: 0, net_collected_cents: 2500 },
        { source: 'QR', views: 1, payments: 2, amount_collected_cents: 5000, amount_refunded_cents: 0, net_collected_cents: 5000 },
      ],
    });
  });
});
