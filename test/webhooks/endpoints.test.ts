import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { createEndpoint } from './helpers.ts';

// The production rules: no WEBHOOK_ALLOW_INSECURE_TARGETS here.
const t = useTestServer();

const good = 'https://hooks.example.com/payments';
/** README: "An account has at most 16 endpoints per mode." */
const MAX_ENDPOINTS = 16;

describe('endpoints API', () => {
  it('when an endpoint is created, then the secret is in that answer only, and never in a read, a list or an update', async () => {
    const a = await t.account();
    const res = await t.request('POST', '/v1/webhook-endpoints', {
      key: a.test,
      body: { url: good, enabled_events: ['checkout.session.completed', 'payment.succeeded'], description: 'orders' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'webhook_endpoint',
      livemode: false,
      url: good,
      description: 'orders',
      enabled_events: ['checkout.session.completed', 'payment.succeeded'],
      is_active: true,
    });
    expect(res.body.id).toMatch(/^we_/);
    expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43,}$/);
    const [row] = await t.sql`select secret from webhook_endpoints where id = ${res.body.id}`;
    expect(row!.secret).toBe(res.body.signing_secret);

    const got = await t.request('GET', `/v1/webhook-endpoints/${res.body.id}`, { key: a.test });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('signing_secret');
    const { signing_secret: _s, ...withoutSecret } = res.body;
    expect(got.body).toEqual(withoutSecret);
    const list = await t.request('GET', '/v1/webhook-endpoints', { key: a.test });
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect(list.body.data).toEqual([withoutSecret]);
    const patched = await t.request('PATCH', `/v1/webhook-endpoints/${res.body.id}`, { key: a.test, body: { description: null } });
    expect(patched.body).not.toHaveProperty('signing_secret');
    expect(JSON.stringify([got.body, list.body, patched.body])).not.toContain(res.body.signing_secret);
  });

  it('when an endpoint is updated, then url, description, enabled_events and is_active change and nothing else', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: good, description: 'one' });
    const res = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, {
      key: a.test,
      body: { url: 'https://other.example.com/h', description: 'two', enabled_events: ['invoice.paid'], is_active: false },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ep.id, url: 'https://other.example.com/h', description: 'two', enabled_events: ['invoice.paid'], is_active: false });
    const bad = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { signing_secret: 'whsec_x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_unknown', param: 'signing_secret' });
    const refused = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { url: 'http://example.com' } });
    expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
  });

  it('when an endpoint is deleted, then it is gone: reading, updating or deleting it again answers 404', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: good });
    expect((await t.request('DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: a.test })).status).toBe(200);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/rotate-secret']] as const) {
      const res = await t.request(method, `/v1/webhook-endpoints/${ep.id}${path}`, { key: a.test, ...(method === 'PATCH' ? { body: {} } : {}) });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    }
  });

  it('when a test key asks for a live endpoint or another account asks, then it answers 404 like a missing id', async () => {
    const a = await t.account();
    const b = await t.account();
    const ep = await createEndpoint(t, a.live, { url: good });
    expect(ep.livemode).toBe(true);
    for (const key of [a.test, b.live]) {
      expect((await t.request('GET', `/v1/webhook-endpoints/${ep.id}`, { key })).status).toBe(404);
      expect((await t.request('POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key })).status).toBe(404);
      expect((await t.request('GET', '/v1/webhook-endpoints', { key })).body.data).toEqual([]);
    }
  });

  it('when the secret is rotated, then the answer shows the new secret once and the stored secrets are the new and the old', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: good });
    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: a.test });
    expect(res.status).toBe(200);
    expect(res.body.signing_secret).toMatch(/^whsec_/);
    const [row] = await t.sql`
      select secret, previous_secret, extract(epoch from previous_secret_expires_at - now()) as left from webhook_endpoints where id = ${ep.id}`;
    expect(row).toMatchObject({ secret: res.body.signing_secret, previous_secret: ep.signing_secret });
    expect(Number(row!.left)).toBeGreaterThan(24 * 3600 - 60);
    expect(Number(row!.left)).toBeLessThanOrEqual(24 * 3600);
    expect((await t.request('GET', `/v1/webhook-endpoints/${ep.id}`, { key: a.test })).body).not.toHaveProperty('signing_secret');
  });

  it(`when an account has 16 endpoints in a mode, then a 17th is refused in that mode and accepted in the other`, async () => {
    const a = await t.account();
    await Promise.all(Array.from({ length: MAX_ENDPOINTS }, (_, i) => createEndpoint(t, a.test, { url: `${good}/${i}` })));
    const res = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: good, enabled_events: ['*'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('resource_limit_reached');
    expect((await t.request('POST', '/v1/webhook-endpoints', { key: a.live, body: { url: good, enabled_events: ['*'] } })).status).toBe(200);
    const [n] = await t.sql`select count(*)::int as n from webhook_endpoints where account_id = ${a.accountId} and not livemode`;
    expect(n!.n).toBe(MAX_ENDPOINTS);
  });

  it('when 20 creations race for the last places, then exactly 16 endpoints exist', async () => {
    const a = await t.account();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: good, enabled_events: ['*'] } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(MAX_ENDPOINTS);
    expect(results.filter((r) => r.status === 400)).toHaveLength(4);
  });
});

describe('validation', () => {
  const refusedUrls: Array<[string, string]> = [
    ['plain http', 'http://hooks.example.com/x'],
    ['a relative URL', '/webhooks'],
    ['another scheme', 'ftp://hooks.example.com/x'],
    ['credentials', 'https://user:pass@hooks.example.com/x'],
    ['a user name alone', 'https://user@hooks.example.com/x'],
    ['localhost', 'https://localhost/x'],
    ['localhost with a port and a trailing dot', 'https://localhost.:8443/x'],
    ['a *.localhost name', 'https://api.localhost/x'],
    ['IPv4 loopback', 'https://127.0.0.1/x'],
    ['IPv4 loopback elsewhere in 127/8', 'https://127.10.0.3/x'],
    ['IPv4 loopback written as one number', 'https://2130706433/x'],
    ['IPv4 loopback in hex', 'https://0x7f.0.0.1/x'],
    ['private 10/8', 'https://10.0.0.5/x'],
    ['private 172.16/12', 'https://172.20.1.1/x'],
    ['private 192.168/16', 'https://192.168.1.10/x'],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest'],
    ['carrier-grade NAT', 'https://100.64.0.1/x'],
    ['multicast', 'https://224.0.0.1/x'],
    ['unspecified', 'https://0.0.0.0/x'],
    ['broadcast', 'https://255.255.255.255/x'],
    ['reserved (TEST-NET-1)', 'https://192.0.2.10/x'],
    ['reserved (240/4)', 'https://240.0.0.1/x'],
    ['IPv6 loopback', 'https://[::1]/x'],
    ['IPv6 unspecified', 'https://[::]/x'],
    ['IPv6 link-local', 'https://[fe80::1]/x'],
    ['IPv6 unique local', 'https://[fd00::1]/x'],
    ['IPv6 multicast', 'https://[ff02::1]/x'],
    ['IPv6 documentation (reserved)', 'https://[2001:db8::1]/x'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x'],
    ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/x'],
    ['IPv4-mapped in hex', 'https://[::ffff:7f00:1]/x'],
    ['IPv4-compatible loopback', 'https://[::127.0.0.1]/x'],
    ['NAT64 of a private address', 'https://[64:ff9b::a00:1]/x'],
    ['6to4 of loopback', 'https://[2002:7f00:1::]/x'],
    ['not a URL', 'hooks.example.com'],
  ];

  it.each(refusedUrls)('when the url is %s, then it is refused with 400 naming url', async (_label, url) => {
    const a = await t.account();
    const res = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url, enabled_events: ['*'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'url' });
  });

  it.each([
    ['a public name', 'https://hooks.example.com/x'],
    ['a public name that need not resolve now', 'https://not-yet-registered.example/x'],
    ['a public IPv4 address with a port', 'https://93.184.216.34:8443/x'],
    ['a public IPv6 address', 'https://[2606:4700:4700::1111]/x'],
  ])('when the url is %s, then it is accepted', async (_label, url) => {
    const a = await t.account();
    const res = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url, enabled_events: ['*'] } });
    expect(res.status).toBe(200);
  });

  it.each([
    ['missing', undefined, 'parameter_missing'],
    ['empty', [], 'parameter_invalid'],
    ['an unknown type', ['payment.exploded'], 'parameter_invalid'],
    ['"*" beside a type', ['*', 'invoice.paid'], 'parameter_invalid'],
    ['not an array', 'payment.succeeded', 'parameter_invalid'],
  ])('when enabled_events is %s, then it is refused', async (_label, enabled_events, code) => {
    const a = await t.account();
    const res = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: good, enabled_events } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code, param: 'enabled_events' });
  });

  it('when enabled_events names every type of the catalogue, then it is accepted', async () => {
    const a = await t.account();
    const types = (await t.request('GET', '/v1/event-types', { key: a.test })).body.data.map((x: { type: string }) => x.type);
    const res = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: good, enabled_events: types } });
    expect(res.status).toBe(200);
    expect(res.body.enabled_events).toEqual(types);
  });
});

describe('event types and the admin board', () => {
  it('when the catalogue is read, then it lists the seven types of spec 6.2, then the refund, dispute, invoice, installment plan, review and endpoint types', async () => {
    const a = await t.account();
    const res = await t.request('GET', '/v1/event-types', { key: a.test });
    expect(res.status).toBe(200);
    expect(res.body.data.map((x: { type: string }) => x.type)).toEqual([
      'checkout.session.completed',
      'checkout.session.expired',
      'payment.succeeded',
      'payment.failed',
      'payment.refunded',
      'invoice.paid',
      'invoice.sent',
      'refund.created',
      'refund.updated',
      'dispute.created',
      'dispute.updated',
      'dispute.closed',
      'invoice.created',
      'invoice.updated',
      'invoice.deleted',
      'invoice.finalized',
      'invoice.voided',
      'invoice.marked_uncollectible',
      'installment_plan.created',
      'installment_plan.completed',
      'installment_plan.defaulted',
      'installment_plan.cancelled',
      'payment.review_opened',
      'payment.review_closed',
      'webhook_endpoint.disabled',
    ]);
    expect((await t.request('GET', '/v1/event-types')).status).toBe(401);
  });

  it('when ADMIN_USER and ADMIN_PASSWORD are not set, then /admin/queues is not mounted', async () => {
    const res = await t.request('GET', '/admin/queues', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('route_not_found');
  });
});
