import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setResolver } from '../../src/webhooks/dns.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, emit } from './helpers.ts';
import { signedIn } from '../helpers/dash-client.ts';
import { useReceiver } from '../helpers/receiver.ts';

// Issue 21, point 4, replayed with a test key over HTTP: test-mode endpoints reach private and
// loopback addresses by default only on a developer's machine (PUBLIC_BASE_URL on loopback, or
// the embedded services), not because NODE_ENV is unset; every spelling of loopback is refused,
// when the endpoint is saved and at connect time; and the answer of a private target is never shown
// outside such a machine. NODE_ENV is unset in every server here.
const SECRET_ANSWER = 'internal admin panel: db password hunter2';
const rx = useReceiver(() => ({ status: 500, body: SECRET_ANSWER }));
const names = new Map<string, LookupAddress[]>();
beforeAll(async () => {
  setResolver(async (hostname) => {
    const found = names.get(hostname);
    if (found) return found;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  });
});
afterAll(async () => {
  setResolver(null);
});

const PUBLIC = 'https://pay.example.com';
const create = (t: TestServer, key: string, url: string) => t.request('POST', '/v1/webhook-endpoints', { key, body: { url, enabled_events: ['*'] } });
const attemptOf = (t: TestServer, eventId: string) =>
  eventually(async () => {
    const [a] = await t.sql<{ status_code: number | null; error: string | null; response_body: string | null; target_private: boolean | null }[]>`
      select a.status_code, a.error, a.response_body, a.target_private from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.event_id = ${eventId}`;
    return a;
  });

describe('on a deployment with a public address, WEBHOOK_TEST_LOCAL_TARGETS unset', () => {
  // '' is unset (the test server sets 'false' otherwise).
  const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { PUBLIC_BASE_URL: PUBLIC, WEBHOOK_TEST_LOCAL_TARGETS: '', WEBHOOK_TIMEOUT_MS: '1000' } });

  const spellings = [
    'https://2130706433/',
    'http://2130706433/',
    'https://0x7f000001/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://127.0.0.1:8443/hooks',
    'https://127.255.255.254/',
    'https://localhost./',
    'https://LOCALHOST/',
    'https://LocalHost.:8443/',
    'https://api.localhost/',
    'https://[::1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::127.0.0.1]/',
    'https://0.0.0.0/',
    'https://0/',
    'https://[::]/',
    'https://10.0.0.5/',
    'https://192.168.1.20/',
    'https://[fd00::1]/',
    'https://169.254.169.254/latest',
  ];

  it('when a test key saves an endpoint on loopback or a private address, in any spelling, then it is refused (400 naming url), and an endpoint cannot be moved there either', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: 'https://hooks.example.com/x' });
    for (const url of [...spellings, rx.url]) {
      const res = await create(t, a.test, url);
      expect(res.status, url).toBe(400);
      expect(res.body.error, url).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'url' });
      const moved = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { url } });
      expect(moved.status, url).toBe(400);
    }
    expect((await t.sql`select url from webhook_endpoints where account_id = ${a.accountId}`).map((r) => r.url)).toEqual(['https://hooks.example.com/x']);
    // The advice says when the setting is on by default.
    const advice = (await create(t, a.test, 'https://localhost./')).body.error.message as string;
    expect(advice).toContain('WEBHOOK_TEST_LOCAL_TARGETS');
    expect(advice).toContain('on by default only where PUBLIC_BASE_URL is a loopback address');
  });

  it.each([
    ['127.0.0.1', [{ address: '127.0.0.1', family: 4 }]],
    ['::1', [{ address: '::1', family: 6 }]],
    ['::ffff:127.0.0.1', [{ address: '::ffff:127.0.0.1', family: 6 }]],
    ['0.0.0.0', [{ address: '0.0.0.0', family: 4 }]],
    ['a public and a loopback address', [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }]],
  ] as const)('when a test endpoint\'s public-looking name resolves to %s at connect time, then the attempt is refused before connecting', async (_label, addresses) => {
    const a = await t.account();
    const host = `hooks-${Math.random().toString(36).slice(2)}.example.com`;
    names.set(host, [...addresses]);
    await createEndpoint(t, a.test, { url: `https://${host}:${rx.port}/by-name` });
    const before = rx.connections;
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const attempt = await attemptOf(t, event.id);
    expect(attempt).toMatchObject({ status_code: null, response_body: null, target_private: null });
    expect(attempt.error).toMatch(/which is not a public address/);
    expect(rx.connections).toBe(before);
  });
});

describe('on a deployment with a public address, WEBHOOK_TEST_LOCAL_TARGETS=true (the explicit override)', () => {
  const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { PUBLIC_BASE_URL: PUBLIC, WEBHOOK_TEST_LOCAL_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '1000' } });

  it('when a test endpoint on a private address answers, then the delivery is made, but its answer is shown neither by the API nor by the dashboard', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/private` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    await rx.waitFor(1, 15_000, (r) => r.path === '/private');
    // Kept in the database (the operator may read it there), marked as a private target.
    expect(await attemptOf(t, event.id)).toMatchObject({ status_code: 500, response_body: SECRET_ANSWER, target_private: true });
    for (const path of [`/v1/events/${event.id}/deliveries`, `/v1/webhook-endpoints/${ep.id}/deliveries`]) {
      const res = await t.request('GET', path, { key: a.test });
      expect(res.status).toBe(200);
      expect(res.body.data[0].attempts[0]).toMatchObject({ status_code: 500, response_body: null });
      expect(JSON.stringify(res.body)).not.toContain('hunter2');
    }
    const c = await signedIn(t, a.accountId, 'owner@public.example');
    for (const path of [`/dashboard/events/${event.id}`, `/dashboard/webhooks/${ep.id}`]) {
      const page = await c.get(path);
      expect(page.status, path).toBe(200);
      expect(page.html, path).not.toContain('hunter2');
    }
  });
});

describe('on a developer\'s machine (PUBLIC_BASE_URL on loopback), WEBHOOK_TEST_LOCAL_TARGETS unset', () => {
  const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_TEST_LOCAL_TARGETS: '', WEBHOOK_TIMEOUT_MS: '1000' } });

  it('when a test endpoint is on this machine, then it is accepted by default and its answer is shown; a live one is still refused', async () => {
    const a = await t.account();
    expect(t.s.config.publicBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/laptop` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    await rx.waitFor(1, 15_000, (r) => r.path === '/laptop');
    expect(await attemptOf(t, event.id)).toMatchObject({ status_code: 500, target_private: true });
    const res = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key: a.test });
    expect(res.body.data[0].attempts[0].response_body).toBe(SECRET_ANSWER);
    expect((await create(t, a.live, `${rx.url}/laptop`)).status).toBe(400);
  });
});
