import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedIn } from '../helpers/dash-client.ts';
import { logCapture } from '../helpers/logs.ts';
import { useTestServer } from '../helpers/server.ts';
import { createEndpoint, emit } from './helpers.ts';
import { startReceiver, verifyWithStripe, type Receiver } from './receiver.ts';

// Issue 26, point 3: custom headers per endpoint, received by a real receiver on every delivery
// and test event; values write-only (masked in every answer and page, never logged).

const logs = logCapture('debug');
const t = useTestServer({ workers: true, log: logs.log, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', LOG_LEVEL: 'debug' } });
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver(() => 200);
});
afterAll(async () => {
  await rx.close();
});

const SECRET_VALUE = 'gw-key-7f3a9c1e5b2d';
const OTHER_VALUE = 'Bearer tok-90a8b7c6d5';

describe('custom headers of an endpoint', () => {
  it('when an endpoint has headers, then every delivery and test event carries them, the signature still verifies, and no answer or page shows a value', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/h1`, headers: { 'X-Gateway-Key': SECRET_VALUE, Authorization: OTHER_VALUE } });
    expect((ep as unknown as { headers: unknown }).headers).toEqual({ 'X-Gateway-Key': '********', Authorization: '********' });

    const ev = await emit(t, a.accountId, false, 'payment.succeeded');
    const test = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.test, body: { type: 'payment.succeeded' } });
    expect(test.status).toBe(200);
    const got = await rx.waitFor(2, 15_000, (r) => r.path === '/h1');
    for (const r of got) {
      expect(r.headers['x-gateway-key']).toBe(SECRET_VALUE);
      expect(r.headers.authorization).toBe(OTHER_VALUE);
      verifyWithStripe(r, ep.signing_secret);
    }
    expect(got.map((r) => JSON.parse(r.body).id)).toContain(ev.id);

    // Masked in every answer: read, list, update, rotate, and on the dashboard.
    const answers = [
      await t.request('GET', `/v1/webhook-endpoints/${ep.id}`, { key: a.test }),
      await t.request('GET', '/v1/webhook-endpoints', { key: a.test }),
      await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { description: 'gateway' } }),
      await t.request('POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: a.test }),
      await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key: a.test }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body);
      expect(text).not.toContain(SECRET_VALUE);
      expect(text).not.toContain('tok-90a8b7c6d5');
    }
    expect(answers[0]!.body.headers).toEqual({ 'X-Gateway-Key': '********', Authorization: '********' });
    const dash = await signedIn(t, a.accountId, 'owner@headers.example');
    const page = await dash.get(`/dashboard/webhooks/${ep.id}`);
    expect(page.html).toContain('X-Gateway-Key');
    expect(page.html).not.toContain(SECRET_VALUE);
    // Never logged, at debug level either.
    expect(logs.text).not.toContain(SECRET_VALUE);
    expect(logs.text).not.toContain('tok-90a8b7c6d5');
  });

  it('when headers are patched, then the names given are set or (null) removed and the others kept', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/h2`, headers: { 'X-Gateway-Key': SECRET_VALUE, 'X-Other': 'one' } });
    const res = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { headers: { 'x-gateway-key': 'new-value-1', 'X-Other': null, 'X-Added': 'two' } } });
    expect(res.status).toBe(200);
    expect(res.body.headers).toEqual({ 'x-gateway-key': '********', 'X-Added': '********' });
    await emit(t, a.accountId, false, 'payment.succeeded');
    const [r] = await rx.waitFor(1, 15_000, (x) => x.path === '/h2');
    expect(r!.headers['x-gateway-key']).toBe('new-value-1');
    expect(r!.headers['x-added']).toBe('two');
    expect(r!.headers['x-other']).toBeUndefined();
    const stored = await t.sql<{ headers: Record<string, string> }[]>`select headers from webhook_endpoints where id = ${ep.id}`;
    expect(stored[0]!.headers).toEqual({ 'x-gateway-key': 'new-value-1', 'X-Added': 'two' });
  });

  it.each([
    ['Service-Signature', 'the signature'],
    ['Service-Event-Id', 'an id of the service'],
    ['webhook-id', 'the Standard Webhooks family'],
    ['Content-Type', 'the body type'],
    ['User-Agent', 'the sender'],
    ['Host', 'the target'],
    ['Connection', 'a hop-by-hop header'],
    ['Transfer-Encoding', 'a hop-by-hop header'],
    ['Keep-Alive', 'a hop-by-hop header'],
    ['Upgrade', 'a hop-by-hop header'],
    ['Bad Name', 'not a token'],
    ['X-Key:', 'not a token'],
    ['', 'empty'],
  ])('when a header is named %j (%s), then it is refused with 400 naming it', async (name) => {
    const a = await t.account();
    for (const [method, path] of [['POST', '/v1/webhook-endpoints'], ['PATCH', `/v1/webhook-endpoints/${(await createEndpoint(t, a.test, { url: `${rx.url}/x` })).id}`]] as const) {
      const body = method === 'POST' ? { url: `${rx.url}/x`, enabled_events: ['*'], headers: { [name]: 'v' } } : { headers: { [name]: 'v' } };
      const res = await t.request(method, path, { key: a.test, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: `headers[${name}]` });
    }
  });

  it('when a value has a line break or there are more than 10 headers, then it is refused with 400 naming headers', async () => {
    const a = await t.account();
    const broken = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: `${rx.url}/x`, enabled_events: ['*'], headers: { 'X-A': 'v\r\nX-Injected: 1' } } });
    expect(broken.status).toBe(400);
    expect(broken.body.error.param).toBe('headers[X-A]');
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v']));
    const many = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: `${rx.url}/x`, enabled_events: ['*'], headers: eleven } });
    expect(many.status).toBe(400);
    expect(many.body.error.param).toBe('headers');
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-H${i}`, 'v']));
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/x`, headers: ten });
    const more = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { headers: { 'X-New': 'v' } } });
    expect(more.status).toBe(400);
    expect(more.body.error.param).toBe('headers');
    const swap = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { headers: { 'X-New': 'v', 'X-H0': null } } });
    expect(swap.status).toBe(200);
  });
});
