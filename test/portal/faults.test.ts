import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresProxy } from '../helpers/postgres-proxy.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createCustomer, PortalClient, signedIn } from './helpers.ts';
import { usePrivateRedis } from '../helpers/private-redis.ts';

// The portal when its dependencies blink: Redis down (a Redis of this file alone, stopped), and
// Postgres unreachable (a second web app reaches it through a TCP proxy this test closes). Nothing
// here calls a repair function: the running workers do the work.

const redis = usePrivateRedis();
const smtp = useSmtp();
const t = useTestServer(() => ({ workers: true, env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '1000', SMTP_URL: smtp.url } }));
// After-all hooks run last first: Redis is started again before the server's clean-up, which needs it.
afterAll(async () => {
  await redis?.start().catch(() => {});
});

describe('the portal while Redis is down', () => {
  it('when Redis is down, then asking for a link still answers at once (limits counted in memory); when Redis is back, the email is sent and its link works', async () => {
    const { accountId, test } = await t.account();
    await createCustomer(t, test, { email: 'outage@example.com' });
    await redis.stop();
    const c = new PortalClient(t);
    const started = Date.now();
    const res = await c.askForLink(accountId, 'outage@example.com', 'test');
    expect(res.status).toBe(200);
    expect(res.html).toContain('a sign-in link is on its way');
    expect(Date.now() - started).toBeLessThan(3_000);
    const [email] = await eventually(async () => {
      const rows = await t.sql`select id, status from emails where template = 'portal_link' and to_address = 'outage@example.com'`;
      return rows.length ? rows : null;
    });
    expect(email!.status).toBe('PENDING');

    await redis.start();
    // Older than the window left to an after-commit enqueue, so the next reconcile run takes it.
    await t.sql`update emails set created_at = now() - interval '1 minute' where id = ${email!.id}`;
    const mail = await smtp.waitFor((m) => m.emailId === email!.id, 30_000);
    const url = /http:\/\/\S+\/sign-in\?token=[A-Za-z0-9_-]{43}/.exec(mail.text)![0];
    expect((await new PortalClient(t).follow(url)).status).toBe(303);
    expect(smtp.received.filter((m) => m.emailId === email!.id)).toHaveLength(1);
  }, 60_000);
});

describe('the portal while Postgres is unreachable', () => {
  let second: Awaited<ReturnType<typeof secondWebApp>>;
  let proxy: Awaited<ReturnType<typeof postgresProxy>>;

  beforeAll(async () => {
    const db = new URL(t.s.config.databaseUrl);
    proxy = await postgresProxy({ host: db.hostname, port: Number(db.port || 5432) });
    db.hostname = '127.0.0.1';
    db.port = String(proxy.port());
    second = await secondWebApp(t, { DATABASE_URL: db.toString(), REDIS_PREFIX: t.s.config.redisPrefix });
  });
  afterAll(async () => {
    await proxy?.up().catch(() => {});
    await second?.close();
  });

  it('when Postgres cannot be reached, then every portal page answers the 503 page with Retry-After, and works again once it is back', async () => {
    const { accountId, test } = await t.account();
    const cus = await createCustomer(t, test, { email: 'pgdown@example.com' });
    const signed = await signedIn(t, test, cus.id);
    const c = new PortalClient({ ...t, url: second.url });
    for (const [k, v] of signed.cookies) c.cookies.set(k, v);
    expect((await c.get(`/portal/${accountId}/payments`)).status).toBe(200);
    const out = new PortalClient({ ...t, url: second.url });
    await out.get(`/portal/${accountId}`);

    await proxy.down();
    for (const path of ['', '/payments', '/invoices', '/sign-in?token=' + 'A'.repeat(43)]) {
      const res = await c.get(`/portal/${accountId}${path}`);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.html).toContain('Temporarily unavailable');
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    expect((await out.post(`/portal/${accountId}`, { email: 'pgdown@example.com', mode: 'test' })).status).toBe(503);

    await proxy.up();
    await eventually(async () => (await c.get(`/portal/${accountId}/payments`)).status === 200, 15_000, 200);
  }, 60_000);
});
