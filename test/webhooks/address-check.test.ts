import type { LookupAddress } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { setResolver } from '../../src/webhooks/dns.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, emit } from './helpers.ts';
import { useReceiver } from '../helpers/receiver.ts';

// The production rules (no insecure override); names are resolved by a stand-in for DNS.
const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_TIMEOUT_MS: '1000' } });
const rx = useReceiver();
const names = new Map<string, LookupAddress[]>();
beforeAll(async () => {
  setResolver(async (hostname) => {
    const found = names.get(hostname);
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  });
});
afterEach(() => names.clear());
afterAll(async () => {
  setResolver(null);
});

async function firstAttempt(eventId: string) {
  return eventually(async () => {
    const [a] = await t.sql<{ status_code: number | null; error: string | null }[]>`
      select a.status_code, a.error from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where d.event_id = ${eventId}`;
    return a;
  });
}

describe('address check at delivery', () => {
  it.each([
    ['a private IPv4 address', [{ address: '10.0.0.5', family: 4 }]],
    ['loopback', [{ address: '127.0.0.1', family: 4 }]],
    ['IPv6 loopback', [{ address: '::1', family: 6 }]],
    ['an IPv4-mapped loopback', [{ address: '::ffff:127.0.0.1', family: 6 }]],
    ['the cloud metadata address', [{ address: '169.254.169.254', family: 4 }]],
    ['a public and a private address', [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }]],
  ])('when a public-looking name resolves to %s, then the attempt is refused before connecting', async (_label, addresses) => {
    const a = await t.account();
    const host = `hooks-${Math.random().toString(36).slice(2)}.example.com`;
    names.set(host, addresses as LookupAddress[]);
    // The receiver listens on 127.0.0.1 at this port: a connection would reach it.
    await createEndpoint(t, a.test, { url: `https://${host}:${rx.port}/x` });
    const before = rx.connections;
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const attempt = await firstAttempt(event.id);
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toMatch(/not a public address/);
    expect(rx.connections).toBe(before);
    const [d] = await t.sql`select status, next_attempt_at from webhook_deliveries where event_id = ${event.id}`;
    expect(d!.status).toBe('PENDING'); // a failed attempt like any other: retried with backoff
    expect(d!.next_attempt_at).not.toBeNull();
  });

  it('when a saved endpoint names a private IP literal (saved while the override was on), then the attempt is refused without a lookup', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: 'https://hooks.example.com/x' });
    // https, so that the https rule passes and the address rule is what refuses it.
    await t.sql`update webhook_endpoints set url = ${`https://127.0.0.1:${rx.port}/x`} where id = ${ep.id}`;
    const before = rx.connections;
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const attempt = await firstAttempt(event.id);
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toMatch(/^refused target: the URL must not point at a loopback/);
    expect(rx.connections).toBe(before);
  });
});
