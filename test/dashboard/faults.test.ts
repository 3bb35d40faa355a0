import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Payer } from '../helpers/payer.ts';
import { postgresProxy } from '../helpers/postgres-proxy.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DashClient, PASSWORD, createUser, signedIn } from './client.ts';
import { createEndpoint, createSession } from '../helpers/factories.ts';
import { usePrivateRedis } from '../helpers/private-redis.ts';
import { useReceiver } from '../helpers/receiver.ts';

// The dashboard when its dependencies blink: Redis down (a Redis of this file alone, stopped), and
// Postgres unreachable (the dashboard of a second web app reaches Postgres through a TCP proxy
// that this test closes). Nothing here calls a repair function: the running workers do the work.

const redis = usePrivateRedis();
const rx = useReceiver(() => 200);
const t = useTestServer(() => ({ workers: true, env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '1000', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } }));
// After-all hooks run last first: Redis is started again before the server's clean-up, which needs it.
afterAll(async () => {
  await redis?.start().catch(() => {});
});

describe('the dashboard while Redis is down', () => {
  it('when Redis is down, then a merchant signs in, refunds a payment and resends an event; when Redis comes back empty, the refund settles and the event is delivered', async () => {
    const a = await t.account();
    await createUser(t, a.accountId, 'owner@faults.example');
    const endpoint = await createEndpoint(t, a.test, { url: `${rx.url}/hook`, enabled_events: ['checkout.session.expired'] });
    const cs = await createSession(t, a.test, { amount: 2500 });
    await new Payer(t).pay(cs.id);
    const [payment] = await t.sql`select id from payments where checkout_session_id = ${cs.id}`;
    const open = await createSession(t, a.test, { amount: 100 });
    await t.request('POST', `/v1/checkout/sessions/${open.id}/expire`, { key: a.test });
    const [event] = await t.sql`select id from events where type = 'checkout.session.expired' and account_id = ${a.accountId}`;
    await eventually(async () => rx.received.length === 1);

    await redis.stop();
    // Sign-in limits fall back to counting in memory: signing in still works.
    const c = new DashClient(t);
    const started = Date.now();
    expect((await c.signIn('owner@faults.example', PASSWORD)).status).toBe(303);
    await c.get(`/dashboard/payments/${payment!.id}`);
    const refund = await c.post(`/dashboard/payments/${payment!.id}/refunds`, { amount: '5.00', reason: '' });
    expect(refund.status).toBe(303);
    await c.get(`/dashboard/events/${event!.id}`);
    const resend = await c.post(`/dashboard/events/${event!.id}/resend`, { to: 'all' });
    expect(resend.status).toBe(303);
    // Each answer waited at most the enqueue bound, not for Redis.
    expect(Date.now() - started).toBeLessThan(10_000);
    const [pending] = await t.sql`select status from refunds where payment_id = ${payment!.id}`;
    expect(pending!.status).toBe('PENDING');
    const deliveries = await t.sql`select id, status from webhook_deliveries where event_id = ${event!.id} order by id`;
    expect(deliveries.map((d) => d.status)).toEqual(['SUCCEEDED', 'PENDING']);

    await redis.start();
    // The repair passes (every second here) find the refund and the delivery in Postgres. A refund
    // is taken as stuck once it has been PENDING for a minute: its row is made that old.
    await t.sql`update refunds set created_at = now() - interval '2 minutes' where payment_id = ${payment!.id}`;
    await eventually(async () => (await t.sql`select status from refunds where payment_id = ${payment!.id}`)[0]!.status === 'SUCCEEDED', 90_000, 250);
    await eventually(async () => rx.received.length === 2, 30_000);
    expect(rx.received[1]!.headers['service-event-id']).toBe(event!.id);
    expect(endpoint.id).toMatch(/^we_/);
  }, 120_000);
});

describe('the dashboard while Postgres is unreachable', () => {
  let second: Awaited<ReturnType<typeof secondWebApp>>;
  let url: string;
  let proxy: Awaited<ReturnType<typeof postgresProxy>>;

  beforeAll(async () => {
    const db = new URL(t.s.config.databaseUrl);
    proxy = await postgresProxy({ host: db.hostname, port: Number(db.port || 5432) });
    db.hostname = '127.0.0.1';
    db.port = String(proxy.port());
    second = await secondWebApp(t, { DATABASE_URL: db.toString(), REDIS_PREFIX: t.s.config.redisPrefix });
    url = second.url;
  });
  afterAll(async () => {
    await proxy?.up().catch(() => {});
    await second?.close();
  });

  it('when Postgres cannot be reached, then every dashboard page answers a 503 page with Retry-After, and it works again once Postgres is back', async () => {
    const a = await t.account();
    const signed = await signedIn(t, a.accountId, 'owner@pgdown.example');
    const c = new DashClient({ ...t, url });
    for (const [k, v] of signed.cookies) c.cookies.set(k, v);
    expect((await c.get('/dashboard/customers')).status).toBe(200);

    await proxy.down();
    for (const path of ['/dashboard', '/dashboard/customers', '/dashboard/sign-in', '/dashboard/payments']) {
      const res = await c.get(path);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.html).toContain('Temporarily unavailable');
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    const form = await c.send('POST', '/dashboard/customers', { email: 'down@example.com' });
    expect(form.status).toBe(503);

    await proxy.up();
    await eventually(async () => (await c.get('/dashboard/customers')).status === 200, 15_000, 200);
    expect((await c.get('/dashboard')).html).toContain('<h1>Home</h1>');
  }, 60_000);
});
