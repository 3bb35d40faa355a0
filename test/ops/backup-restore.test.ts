import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { dbUrl, dropRedisPrefix, freePort, runScript } from '../helpers/process.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createInstallmentLink, createSession } from '../helpers/factories.ts';
import { covers, DAY, dayStart, partitions } from '../helpers/partitions.ts';
import { startPlan } from '../helpers/plans.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { DIGITS } from '../helpers/cards.ts';

// The backup drill of docs/operations.md ("Backups"): Postgres is the only thing to restore. A
// service's database is dumped (pg_dump) while work is pending in it, restored into a fresh database,
// and the service is started on it with an EMPTY Redis prefix: the repair passes find every pending
// item in Postgres and each is done exactly once. The first service runs no workers, so nothing
// pending is done before the dump; its Redis jobs are lost with it.

const exec = promisify(execFile);
const restored = `t_restore_${randomBytes(5).toString('hex')}`;
const prefix = `t_restore_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'backup-drill-'));
let a: TestServer | undefined;
let smtp: TestSmtp | undefined;
let receiver: Receiver | undefined;
let service: ReturnType<typeof runScript> | undefined;
let sql: postgres.Sql | undefined;

afterAll(async () => {
  service?.child.kill('SIGKILL');
  await sql?.end();
  await a?.close();
  const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
  await admin`drop database if exists ${admin(restored)} with (force)`;
  await admin.end();
  await dropRedisPrefix(prefix);
  await smtp?.close();
  receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = <T>(xs: readonly T[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<T, number>());

describe('restoring a Postgres backup onto an empty Redis', () => {
  it('when a dump taken with work pending is restored and the service starts on an empty Redis prefix, then every pending session expiry, delivery, installment part and email is done exactly once', async () => {
    smtp = await startSmtp();
    receiver = await startReceiver();
    const env = { SMTP_URL: smtp.url, WEBHOOK_TEST_LOCAL_TARGETS: 'true', CHECKOUT_MIN_EXPIRY_SECONDS: '1', INSTALLMENT_TEST_INTERVAL_SECONDS: '3600' };
    a = await startTestServer({ env });
    const { test: key } = await a.account();
    const endpoint = await a.request('POST', '/v1/webhook-endpoints', { key, body: { url: `${receiver.url}/hooks`, enabled_events: ['*'] } });
    expect(endpoint.status).toBe(200);

    // Pending work, none of it done (no worker runs here):
    // sessions that expire in two seconds,
    const expiring = await Promise.all([1, 2].map(() => createSession(a!, key, { expires_at: Math.floor(Date.now() / 1000) + 2 })));
    // a paid session (events to deliver, a receipt to email),
    const paid = await createSession(a, key);
    expect((await a.request('POST', `/v1/test-helpers/checkout/sessions/${paid.id}/pay`, { key, body: { card: DIGITS.visa, email: 'ada@example.com' } })).status).toBe(200);
    // an installment plan whose second part is due,
    const link = await createInstallmentLink(a, key);
    const { plan } = await startPlan(a, link.url);
    await a.sql`update installments set due_at = now() - interval '10 seconds', next_attempt_at = now() - interval '10 seconds' where plan_id = ${plan!.id} and number = 2`;
    const before = {
      deliveries: (await a.sql`select id from webhook_deliveries where status = 'PENDING'`).length,
      emails: (await a.sql`select id from emails where status = 'PENDING'`).length,
    };
    expect(before.deliveries).toBeGreaterThanOrEqual(5);
    expect(before.emails).toBeGreaterThanOrEqual(2);

    // The backup, taken while the service runs.
    const dump = join(dir, 'payments.dump');
    await exec('pg_dump', ['--format=custom', `--file=${dump}`, a.s.config.databaseUrl]);
    await a.close();
    a = undefined;

    // A fresh database, the dump restored into it.
    const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
    await admin`create database ${admin(restored)}`;
    await admin.end();
    await exec('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${dbUrl(restored)}`, dump]);
    sql = postgres(dbUrl(restored), { max: 2, onnotice: () => {} });
    // An older backup lacks the partitions of later days: the start-up makes them (one is removed here to show it).
    const day10 = dayStart(Date.now()) + 10 * DAY;
    const [ahead] = (await partitions(sql, 'events')).filter((p) => p.lower_at?.getTime() === day10);
    await sql`drop table ${sql(ahead!.partition)}`;

    // The service on the restored database and a Redis prefix nobody used.
    const port = await freePort();
    service = runScript('src/main.ts', [], {
      PATH: process.env.PATH,
      DATABASE_URL: dbUrl(restored),
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: prefix,
      PORT: String(port),
      LOG_LEVEL: 'info',
      RECONCILE_INTERVAL_MS: '1000',
      ...env,
    });
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)) === 200, 30_000);
    expect(covers(await partitions(sql), 'events', day10 + 1000)).toBe(true);

    const settled = async () => {
      const sessions = await sql!`select status from checkout_sessions where id = any(${expiring.map((s) => s.id)}::text[])`;
      const part = await sql!`select status from installments where plan_id = ${plan!.id} and number = 2`;
      const open = await sql!`select (select count(*)::int from webhook_deliveries where status <> 'SUCCEEDED') as deliveries,
                                     (select count(*)::int from emails where status <> 'SENT') as emails`;
      return sessions.every((s) => s.status === 'EXPIRED') && part[0]!.status === 'PAID' && open[0]!.deliveries === 0 && open[0]!.emails === 0;
    };
    await eventually(settled, 45_000, 200);
    // Two more repair rounds of every pass (waited for in repair_pass_status, not on the clock):
    // nothing pending is done a second time.
    for (let round = 0; round < 2; round++) {
      const [{ at }] = (await sql!`select now() as at`) as unknown as [{ at: Date }];
      await eventually(async () => {
        const [r] = await sql!`select count(*)::int as n, count(*) filter (where last_finished_at > ${at})::int as done from repair_pass_status`;
        return r!.n > 0 && r!.n === r!.done;
      }, 30_000, 100);
    }

    const events = (await sql`select id, type from events order by id`) as unknown as Array<{ id: string; type: string }>;
    const received = count(receiver.received.map((r) => r.headers['service-event-id'] as string));
    expect(Object.fromEntries(received)).toEqual(Object.fromEntries(events.map((e) => [e.id, 1])));
    const expired = events.filter((e) => e.type === 'checkout.session.expired');
    expect(expired).toHaveLength(2);

    const emails = (await sql`select id from emails`).map((r) => r.id as string);
    expect(emails.length).toBeGreaterThanOrEqual(before.emails + 1); // the second part's receipt too
    expect(Object.fromEntries(count(smtp.received.map((m) => m.emailId)))).toEqual(Object.fromEntries(emails.map((id) => [id, 1])));

    const charges = await sql`select installment_number, count(*)::int as n from payments where installment_plan_id = ${plan!.id} and status = 'SUCCEEDED' group by 1 order by 1`;
    expect(charges.map((r) => [r.installment_number, r.n])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  }, 120_000);
});
