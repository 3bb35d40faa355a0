import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../src/dashboard/service.ts';
import { signedIn } from '../helpers/dash-client.ts';
import { useTestServer } from '../helpers/server.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, emit } from './helpers.ts';
import { startReceiver, verifyWithStripe, type Receiver } from './receiver.ts';

// Issue 26, point 1: a receiver that fails for a shortened window (4 s, warned 0.8 s before, at
// least 5 failed attempts) is warned about, then disabled; its events wait PAUSED and all go once
// it is resumed. Retries are pushed far out (backoff base 100 s): each event makes one attempt
// during the test, so the deliveries counted are exactly the events sent.

const WINDOW_MS = 4000;
let smtp: TestSmtp;
let down: Receiver;
let other: Receiver;
let failing = true;
beforeAll(async () => {
  smtp = await startSmtp();
  down = await startReceiver(() => (failing ? 500 : 200));
  other = await startReceiver(() => 200);
});
afterAll(async () => {
  await Promise.all([smtp.close(), down.close(), other.close()]);
});

const t = useTestServer(() => ({
  workers: true,
  env: {
    SMTP_URL: smtp.url,
    WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
    WEBHOOK_BACKOFF_BASE_MS: '100000',
    WEBHOOK_DISABLE_AFTER_MS: String(WINDOW_MS),
    WEBHOOK_DISABLE_MIN_FAILURES: '5',
  },
}));

const endpointRow = async (id: string) =>
  (await t.sql<{ is_active: boolean; failing_since: Date | null; failed_attempts: number; failure_warned_at: Date | null; disabled_at: Date | null }[]>`
    select is_active, failing_since, failed_attempts, failure_warned_at, disabled_at from webhook_endpoints where id = ${id}`)[0]!;

const attemptsOfEvent = async (eventId: string, endpointId: string) =>
  (await t.sql<{ n: number }[]>`
    select count(a.*)::int as n from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id
    where d.event_id = ${eventId} and d.endpoint_id = ${endpointId}`)[0]!.n;

describe('endpoint health and automatic disabling', () => {
  it('when every attempt fails for the window, then the operators are warned, the endpoint is disabled, another endpoint gets the event, and resuming sends every held event', async () => {
    const acct = await t.account();
    const dash = await signedIn(t, acct.accountId, 'owner@health.example');
    for (const [email, role] of [['admin@health.example', 'administrator'], ['dev@health.example', 'developer']] as const) {
      const u = await addUser(t.sql, acct.accountId, email, 3600);
      if (!u.ok) throw new Error(u.problem);
      await t.sql`update dashboard_users set role = ${role} where account_id = ${acct.accountId} and email = ${email}`;
    }
    const a = await createEndpoint(t, acct.test, { url: `${down.url}/a`, enabled_events: ['*'] });
    const b = await createEndpoint(t, acct.test, { url: `${other.url}/b`, enabled_events: ['webhook_endpoint.disabled'] });

    // Events one after another, each waited for until its attempt is recorded, until the endpoint is disabled.
    const emitted: string[] = [];
    let warnedWhileActive = false;
    await eventually(
      async () => {
        const ev = await emit(t, acct.accountId, false, 'payment.succeeded');
        emitted.push(ev.id);
        await eventually(async () => (await attemptsOfEvent(ev.id, a.id)) === 1 || !(await endpointRow(a.id)).is_active);
        const row = await endpointRow(a.id);
        if (row.is_active && row.failure_warned_at) warnedWhileActive = true;
        return !row.is_active;
      },
      WINDOW_MS * 6,
      0,
    );
    expect(warnedWhileActive).toBe(true);

    const row = await endpointRow(a.id);
    expect(row.disabled_at).not.toBeNull();
    expect(row.disabled_at!.getTime() - row.failing_since!.getTime()).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(row.failed_attempts).toBeGreaterThanOrEqual(5);

    // The API object.
    const got = await t.request('GET', `/v1/webhook-endpoints/${a.id}`, { key: acct.test });
    // An attempt already in flight at the disabling may still be counted after the row was read.
    expect(got.body).toMatchObject({ is_active: false, health: { status: 'disabled' } });
    expect(got.body.health.failed_attempts).toBeGreaterThanOrEqual(row.failed_attempts);
    expect(got.body.health.failing_since).toBe(Math.floor(row.failing_since!.getTime() / 1000));

    // The event, signed, on the other endpoint only.
    const [disabledEvent] = await other.waitFor(1, 15_000, (r) => r.path === '/b');
    const ev = verifyWithStripe(disabledEvent!, b.signing_secret) as unknown as { id: string; type: string; data: { object: { id: string; health: { status: string } } } };
    expect(ev.type).toBe('webhook_endpoint.disabled');
    expect(ev.data.object).toMatchObject({ id: a.id, health: { status: 'disabled' } });
    const deliveriesOfIt = await t.sql<{ endpoint_id: string }[]>`select endpoint_id from webhook_deliveries where event_id = ${ev.id}`;
    expect(deliveriesOfIt.map((d) => d.endpoint_id)).toEqual([b.id]);

    // Warning and disabling emails over SMTP, to the owner and the administrator only, once each.
    for (const to of ['owner@health.example', 'admin@health.example']) {
      await smtp.waitFor((m) => m.to.includes(to) && /was disabled/.test(m.subject));
      const mine = smtp.to(to);
      expect(mine.filter((m) => /will be disabled/.test(m.subject))).toHaveLength(1);
      expect(mine.filter((m) => /was disabled/.test(m.subject))).toHaveLength(1);
      expect(mine.find((m) => /was disabled/.test(m.subject))!.text).toContain(a.id);
    }
    expect(smtp.to('dev@health.example')).toEqual([]);

    // The audit log names the service as the actor.
    const audit = await t.sql`select actor_type, object_id from audit_events where account_id = ${acct.accountId} and action = 'webhook_endpoint.disabled'`;
    expect(audit).toEqual([{ actor_type: 'system', object_id: a.id }]);

    // The banner on the dashboard, on the endpoint's page and on the list.
    const page = await dash.get(`/dashboard/webhooks/${a.id}`);
    expect(page.html).toContain('data-health-banner="disabled"');
    expect((await dash.get('/dashboard/webhooks')).html).toContain('data-health-banner="disabled"');

    // Events meanwhile wait PAUSED; nothing is dropped. (A delivery made while the disabling committed
    // is paused by its own job when it runs: pauseIfInactive.)
    for (let i = 0; i < 3; i++) emitted.push((await emit(t, acct.accountId, false, 'payment.succeeded')).id);
    await eventually(async () => {
      const held = await t.sql<{ status: string; n: number }[]>`
        select status, count(*)::int as n from webhook_deliveries where endpoint_id = ${a.id} group by status`;
      return held.length === 1 && held[0]!.status === 'PAUSED' && held[0]!.n === emitted.length;
    });

    // The receiver is fixed and the endpoint resumed: every held event arrives, once.
    failing = false;
    const resumed = await t.request('PATCH', `/v1/webhook-endpoints/${a.id}`, { key: acct.test, body: { is_active: true } });
    expect(resumed.body).toMatchObject({ is_active: true, health: { status: 'healthy', failing_since: null, failed_attempts: 0, disabled_at: null } });
    await eventually(async () => {
      const rows = await t.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${a.id} and status = 'SUCCEEDED'`;
      return rows[0]!.n === emitted.length;
    });
    const okIds = new Set(down.received.filter((r) => r.path === '/a').map((r) => JSON.parse(r.body).id as string));
    for (const id of emitted) expect(okIds.has(id)).toBe(true);
    const total = await t.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${a.id}`;
    expect(total[0]!.n).toBe(emitted.length);
    expect((await dash.get(`/dashboard/webhooks/${a.id}`)).html).not.toContain('data-health-banner');
  });

  it('when a failing endpoint answers once, then its run of failures ends and it is healthy again', async () => {
    const acct = await t.account();
    failing = true;
    const a = await createEndpoint(t, acct.test, { url: `${down.url}/c`, enabled_events: ['*'] });
    const first = await emit(t, acct.accountId, false, 'payment.succeeded');
    await eventually(async () => (await attemptsOfEvent(first.id, a.id)) === 1);
    const got = await t.request('GET', `/v1/webhook-endpoints/${a.id}`, { key: acct.test });
    expect(got.body.health).toMatchObject({ status: 'failing', failed_attempts: 1, disabled_at: null });
    failing = false;
    const second = await emit(t, acct.accountId, false, 'payment.succeeded');
    await eventually(async () => (await attemptsOfEvent(second.id, a.id)) === 1);
    expect(await endpointRow(a.id)).toMatchObject({ is_active: true, failing_since: null, failed_attempts: 0 });
    const again = await t.request('GET', `/v1/webhook-endpoints/${a.id}`, { key: acct.test });
    expect(again.body.health).toEqual({ status: 'healthy', failing_since: null, failed_attempts: 0, disabled_at: null });
  });
});
