import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createSession } from '../helpers/factories.ts';
import { usePrivateRedis } from '../helpers/private-redis.ts';

// The running service (web and every worker) on a Redis of this file alone, stopped while a payer
// pays: the payment and its receipt row commit, the enqueue is given up after its bound, and once
// Redis is back (empty) the reconcile schedule sends the receipt. Nothing here calls a repair function.

const redis = usePrivateRedis();
const smtp = useSmtp();
const t = useTestServer(() => ({ workers: true, env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '1000', SMTP_URL: smtp.url } }));
afterAll(async () => {
  await redis?.start().catch(() => {}); // the server's clean-up needs its Redis
});

let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

describe('Redis down while a payment succeeds', () => {
  it('when Redis is down, then the payment still succeeds with its receipt PENDING; when Redis comes back empty, the receipt is sent once', async () => {
    const cs = await createSession(t, key, { amount: 3100 });
    await redis.stop();
    expect((await new Payer(t).pay(cs.id, { email: 'outage@example.com' })).status).toBe(303);
    const [payment] = await t.sql`select id, status from payments where checkout_session_id = ${cs.id}`;
    expect(payment!.status).toBe('SUCCEEDED');
    const [email] = await t.sql`select id, status from emails where related_object = ${payment!.id}`;
    expect(email).toMatchObject({ status: 'PENDING' });

    await redis.start();
    // Older than the window left to an after-commit enqueue, so the next reconcile run takes it.
    await t.sql`update emails set created_at = now() - interval '1 minute' where id = ${email!.id}`;
    const mail = await smtp.waitFor((m) => m.emailId === email!.id, 30_000);
    expect(mail.to).toEqual(['outage@example.com']);
    expect(mail.text).toContain('$31.00');
    await eventually(async () => (await t.sql`select status from emails where id = ${email!.id}`)[0]!.status === 'SENT');
    expect(smtp.received.filter((m) => m.emailId === email!.id)).toHaveLength(1);
  }, 60_000);
});
