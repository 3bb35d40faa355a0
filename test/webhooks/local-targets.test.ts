import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setResolver } from '../../src/webhooks/dns.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, emit } from './helpers.ts';
import { verifyWithStripe } from './receiver.ts';
import { useReceiver } from '../helpers/receiver.ts';

// Issue 15, point 4: test-mode endpoints may be local when WEBHOOK_TEST_LOCAL_TARGETS is on; live
// ones never. Names are resolved by a stand-in for DNS, so that a name can point at this machine.
const rx = useReceiver();
const names = new Map<string, LookupAddress[]>();
beforeAll(async () => {
  setResolver(async (hostname, family) => {
    const found = names.get(hostname);
    if (found) return found;
    if (hostname === 'localhost') return family === 6 ? [{ address: '::1', family: 6 }] : [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  });
});
afterAll(async () => {
  setResolver(null);
});

const create = (t: TestServer, key: string, url: string) =>
  t.request('POST', '/v1/webhook-endpoints', { key, body: { url, enabled_events: ['*'] } });

async function firstAttempt(t: TestServer, eventId: string) {
  return eventually(async () => {
    const [a] = await t.sql<{ status_code: number | null; error: string | null }[]>`
      select a.status_code, a.error from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where d.event_id = ${eventId}`;
    return a;
  });
}

describe('with WEBHOOK_TEST_LOCAL_TARGETS on', () => {
  const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_TEST_LOCAL_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '1000' } });

  it('when a test-mode endpoint is on http://127.0.0.1:<port>, then it is accepted and its events are delivered, signed as any delivery', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/local-ok` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const [got] = await rx.waitFor(1, 15_000, (r) => r.path === '/local-ok');
    expect(verifyWithStripe(got!, ep.signing_secret)).toMatchObject({ id: event.id, type: 'payment.succeeded' });
    expect(await firstAttempt(t, event.id)).toEqual({ status_code: 200, error: null });
  });

  it('when a test-mode endpoint names localhost, a private address, or a name resolving to this machine, then it is accepted and delivered', async () => {
    const a = await t.account();
    for (const url of ['http://localhost:4000/x', 'https://api.localhost/x', 'http://10.0.0.5/x', 'http://192.168.1.20:8080/x', 'http://[::1]:4000/x']) {
      expect((await create(t, a.test, url)).status, url).toBe(200);
    }
    const host = `receiver-${Math.random().toString(36).slice(2)}.internal`;
    names.set(host, [{ address: '127.0.0.1', family: 4 }]);
    const b = await t.account();
    await createEndpoint(t, b.test, { url: `http://${host}:${rx.port}/by-name` });
    const event = await emit(t, b.accountId, false, 'payment.succeeded');
    await rx.waitFor(1, 15_000, (r) => r.path === '/by-name');
    expect(await firstAttempt(t, event.id)).toEqual({ status_code: 200, error: null });
  });

  it('when a test-mode endpoint names the cloud metadata address, then it is still refused', async () => {
    const a = await t.account();
    const res = await create(t, a.test, 'http://169.254.169.254/latest');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
  });

  it.each([
    ['http on loopback', 'http://127.0.0.1:4000/webhooks', 'must be an https:// URL'],
    ['https on localhost', 'https://localhost/webhooks', 'must not point at localhost'],
    ['a private address', 'https://10.0.0.5/webhooks', 'must not point at a loopback, private'],
  ])('when a live-mode endpoint is %s, then it is refused whatever the setting, saying to use listen', async (_label, url, problem) => {
    const a = await t.account();
    const res = await create(t, a.live, url);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'url' });
    expect(res.body.error.message).toContain(`Invalid url: ${problem}`);
    expect(res.body.error.message).toContain('Live-mode endpoints must be public https URLs');
    expect(res.body.error.message).toContain('payments-service listen');
    expect(await t.sql`select id from webhook_endpoints where account_id = ${a.accountId}`).toHaveLength(0);
  });

  it('when a live-mode endpoint is updated to a local URL, then it is refused and keeps its URL', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.live, { url: 'https://hooks.example.com/x' });
    const res = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.live, body: { url: `${rx.url}/x` } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('payments-service listen');
    expect((await t.request('GET', `/v1/webhook-endpoints/${ep.id}`, { key: a.live })).body.url).toBe('https://hooks.example.com/x');
  });

  it('when a live endpoint\'s public-looking name resolves to loopback, then the attempt is refused at delivery, before connecting', async () => {
    const a = await t.account();
    const host = `hooks-${Math.random().toString(36).slice(2)}.example.com`;
    names.set(host, [{ address: '127.0.0.1', family: 4 }]);
    await createEndpoint(t, a.live, { url: `https://${host}:${rx.port}/live` });
    const before = rx.connections;
    const event = await emit(t, a.accountId, true, 'payment.succeeded');
    const attempt = await firstAttempt(t, event.id);
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toMatch(/resolves to 127\.0\.0\.1, which is not a public address/);
    expect(rx.connections).toBe(before);
  });

  it('when a live endpoint row holds a local URL (written behind the API\'s back), then delivery refuses it without connecting', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.live, { url: 'https://hooks.example.com/x' });
    await t.sql`update webhook_endpoints set url = ${`${rx.url}/sneaky`} where id = ${ep.id}`;
    const before = rx.connections;
    const event = await emit(t, a.accountId, true, 'payment.succeeded');
    expect((await firstAttempt(t, event.id)).error).toMatch(/^refused target: the URL must be an https:\/\/ URL/);
    expect(rx.connections).toBe(before);
  });
});

describe('with WEBHOOK_TEST_LOCAL_TARGETS off (the production default)', () => {
  const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_TEST_LOCAL_TARGETS: 'false', WEBHOOK_TIMEOUT_MS: '1000' } });

  it.each([
    ['http on loopback', 'http://127.0.0.1:4000/webhooks'],
    ['https on localhost', 'https://localhost/webhooks'],
    ['a private address', 'https://192.168.1.20/webhooks'],
  ])('when a test-mode endpoint is %s, then it is refused with a message naming listen and the setting', async (_label, url) => {
    const a = await t.account();
    const res = await create(t, a.test, url);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    expect(res.body.error.message).toContain('payments-service listen');
    expect(res.body.error.message).toContain('First webhook in five minutes with listen');
    expect(res.body.error.message).toContain('WEBHOOK_TEST_LOCAL_TARGETS');
  });

  it('when a URL is refused for its credentials, then no advice is added', async () => {
    const a = await t.account();
    const res = await create(t, a.test, 'https://user:pw@hooks.example.com/x');
    expect(res.body.error.message).toBe('Invalid url: must not contain credentials (user:password@).');
  });

  it('when a test endpoint saved while the setting was on is delivered with it off, then the attempt is refused before connecting', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: 'https://hooks.example.com/x' });
    await t.sql`update webhook_endpoints set url = ${`${rx.url}/was-allowed`} where id = ${ep.id}`;
    const before = rx.connections;
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    expect((await firstAttempt(t, event.id)).error).toMatch(/^refused target/);
    expect(rx.connections).toBe(before);
  });
});
