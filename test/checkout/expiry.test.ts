import type { Job } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { reconcileExpiries } from '../../src/checkout/expiry.ts';
import { SWEEP_BATCH, startExpirySweeper } from '../../src/checkout/jobs.ts';
import { newId } from '../../src/lib/ids.ts';
import { nowUnix } from '../../src/lib/time.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { sessionExpiryWorker } from '../../workers/session-expiry.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession } from './helpers.ts';
import { eventsFor } from '../helpers/events.ts';
import { watchJobs } from '../helpers/jobs.ts';
import { Payer } from '../helpers/payer.ts';
import { eventually } from '../helpers/wait.ts';

const t = useTestServer({ workers: [sessionExpiryWorker as never], env: { CHECKOUT_MIN_EXPIRY_SECONDS: '2' } });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const statusOf = async (id: string) => (await t.sql`select status, expired_at from checkout_sessions where id = ${id}`)[0]!;

describe('expiry by the sweeper', () => {
  it('when expires_at comes (CHECKOUT_MIN_EXPIRY_SECONDS=2), then the sweeper moves OPEN to EXPIRED within a second, with one event', async () => {
    const expiresAt = nowUnix() + 3;
    const cs = await createSession(t, key, { expires_at: expiresAt });
    expect((await statusOf(cs.id)).status).toBe('OPEN');
    const row = await eventually(async () => {
      const r = await statusOf(cs.id);
      return r.status === 'EXPIRED' ? r : null;
    }, 20_000);
    // On time: never before expires_at (expired_at is the database's clock at the update), and
    // at the right second; the bound leaves room for a loaded machine's scheduling delay.
    expect(row.expired_at.getTime()).toBeGreaterThanOrEqual(expiresAt * 1000);
    expect(row.expired_at.getTime()).toBeLessThan(expiresAt * 1000 + 3_000);
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
  });

  it('when a session is created, then nothing about its expiry is written to Redis', async () => {
    const queue = t.s.queues.get('session-expiry');
    const before = await queue.getJobCounts();
    const cs = await createSession(t, key, { expires_at: nowUnix() + 60 });
    expect(await queue.getJob(cs.id)).toBeUndefined();
    expect(await queue.getJobCounts()).toEqual(before);
  });

  it('when many sessions come due at once, then all turn EXPIRED, each with exactly one event', async () => {
    const a = await t.account();
    // Far enough ahead that a loaded machine still creates all 40 before CHECKOUT_MIN_EXPIRY_SECONDS runs out.
    const expiresAt = nowUnix() + 6;
    const made = await Promise.all(Array.from({ length: 40 }, () => createSession(t, a.test, { expires_at: expiresAt })));
    await eventually(async () => {
      const [r] = await t.sql`select count(*)::int as n from checkout_sessions where account_id = ${a.accountId} and status = 'EXPIRED'`;
      return r!.n === made.length;
    }, 20_000);
    const events = await t.sql`select data from events where account_id = ${a.accountId} and type = 'checkout.session.expired'`;
    expect(events.length).toBe(made.length);
  });

  it('when the session is paid first, then the sweeper leaves it COMPLETE', async () => {
    const cs = await createSession(t, key, { expires_at: nowUnix() + 3 });
    expect((await new Payer(t).pay(cs.id)).status).toBe(303);
    // Past expires_at (moved there, not waited for): neither a read nor a sweep expires the paid one.
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 second' where id = ${cs.id}`;
    expect((await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body.status).toBe('COMPLETE');
    const later = await createSession(t, key, { expires_at: nowUnix() + 3 }); // + 3: the create may land a second later than nowUnix()
    await eventually(async () => ((await statusOf(later.id)).status === 'EXPIRED' ? true : null), 20_000);
    expect((await statusOf(cs.id)).status).toBe('COMPLETE');
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.completed']);
  });

  it('when a delayed expiry job left by an older version runs, then it ends and changes nothing', async () => {
    const cs = await createSession(t, key, { expires_at: nowUnix() + 60 });
    expect((await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key })).body.status).toBe('EXPIRED');
    const queue = t.s.queues.get('session-expiry');
    // The job as versions before issue 28 added it (jobId = session id, account and mode as data,
    // the queue's retention options dropped so that the worker's apply).
    const jobs = await watchJobs(queue, t.s.redis);
    try {
      const opts = { jobId: cs.id, attempts: undefined, backoff: undefined, removeOnComplete: undefined, removeOnFail: undefined };
      await queue.add('expire', { a: cs.id, l: false }, opts);
      expect(await jobs.outcome(cs.id)).toEqual({ state: 'completed', returnvalue: 'swept' });
    } finally {
      await jobs.close();
    }
    expect(await queue.getJob(cs.id)).toBeUndefined(); // retention: a completed expiry job is not kept
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    expect((await statusOf(cs.id)).status).toBe('EXPIRED');
  });
});

describe('a burst', () => {
  it('when more than a batch comes due at once and two more sweepers run beside the worker\'s, then each session turns EXPIRED once, never early, with exactly one event', async () => {
    const a = await t.account();
    const n = SWEEP_BATCH * 3;
    const ids = Array.from({ length: n }, () => newId('cs'));
    // Due already: the first look of every sweeper finds a full batch, so all their drains run at once.
    await t.sql`
      insert into checkout_sessions (id, account_id, livemode, amount_cents, currency, success_url, expires_at)
      select id, ${a.accountId}, false, 1999, 'usd', 'https://merchant.example/thanks', now() - interval '1 second'
      from unnest(${ids}::text[]) as u(id)`;
    const sweepers = [startExpirySweeper(t.s), startExpirySweeper(t.s)];
    try {
      await eventually(async () => {
        const [r] = await t.sql`select count(*)::int as n from checkout_sessions where account_id = ${a.accountId} and status = 'EXPIRED'`;
        return r!.n === n ? true : null;
      }, 60_000);
    } finally {
      await Promise.all(sweepers.map((x) => x.stop()));
    }
    const [early] = await t.sql`select count(*)::int as n from checkout_sessions where account_id = ${a.accountId} and expired_at < expires_at`;
    expect(early!.n).toBe(0);
    const events = await t.sql<{ id: string; n: number }[]>`
      select data->'object'->>'id' as id, count(*)::int as n from events
      where account_id = ${a.accountId} and type = 'checkout.session.expired' group by 1`;
    expect(events.length).toBe(n);
    expect(events.filter((e) => e.n !== 1)).toEqual([]);
    expect(new Set(events.map((e) => e.id))).toEqual(new Set(ids));
  });
});

describe('expiry against payment', () => {
  it('when expiry and payment race on the same sessions, then each session has exactly one winner and one matching event', async () => {
    const sessions = await Promise.all(Array.from({ length: 12 }, () => createSession(t, key)));
    await Promise.all(
      sessions.map(async (cs, i) => {
        const payer = new Payer(t);
        await payer.get(`/checkout/${cs.id}`);
        const expire = () => t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
        await Promise.all(i % 2 ? [payer.pay(cs.id), expire()] : [expire(), payer.pay(cs.id)]);
      }),
    );
    for (const cs of sessions) {
      const { status } = await statusOf(cs.id);
      const events = await eventsFor(t, cs.id);
      const payments = await t.sql`select status from payments where checkout_session_id = ${cs.id}`;
      if (status === 'COMPLETE') {
        expect(events).toEqual(['checkout.session.completed']);
        expect(payments.map((p) => p.status)).toEqual(['SUCCEEDED']);
      } else {
        expect(status).toBe('EXPIRED');
        expect(events).toEqual(['checkout.session.expired']);
        expect(payments.length).toBe(0);
      }
    }
  });
});

describe('reconcile', () => {
  it('when no worker runs, then the reconciler expires the OPEN sessions past expires_at, once', async () => {
    await t.workers!.close(); // no worker from here on: only the reconciler can expire
    const a = await t.account();
    // Its expires_at is moved below; + 2 here was refused when the create landed a second after nowUnix().
    const lost = await createSession(t, a.test, { expires_at: nowUnix() + 60 });
    const future = await createSession(t, a.test);
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
    if (keys.length) await t.s.redis.del(...keys);
    expect(await t.s.queues.get('session-expiry').getJob(lost.id)).toBeUndefined();

    // Past expires_at but inside the grace period: still the sweeper's business.
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 second' where id = ${lost.id}`;
    await reconcileExpiries(t.s);
    expect((await statusOf(lost.id)).status).toBe('OPEN');

    await t.sql`update checkout_sessions set expires_at = now() - interval '1 minute' where id = ${lost.id}`;
    expect(await reconcileExpiries(t.s)).toBeGreaterThanOrEqual(1);
    expect(await reconcileExpiries(t.s)).toBe(0);
    expect((await statusOf(lost.id)).status).toBe('EXPIRED');
    expect((await statusOf(future.id)).status).toBe('OPEN');
    expect(await eventsFor(t, lost.id)).toEqual(['checkout.session.expired']);
  });

  it('when the reconcile job runs, then it expires the OPEN sessions the sweeper missed', async () => {
    const a = await t.account();
    const lost = await createSession(t, a.test);
    await t.s.queues.get('session-expiry').remove(lost.id);
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 minute' where id = ${lost.id}`;
    const repaired = (await reconcileWorker.process({} as Job, t.s)) as Record<string, number>;
    expect(repaired['checkout-session-expiry']).toBeGreaterThanOrEqual(1);
    expect((await statusOf(lost.id)).status).toBe('EXPIRED');
    expect(await eventsFor(t, lost.id)).toEqual(['checkout.session.expired']);
  });
});
