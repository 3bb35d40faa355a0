import type { Job } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { reconcileCounters, type ViewRecord } from '../../src/payment-links/counters.ts';
import { ViewRecorder } from '../../src/payment-links/view-counter.ts';
import { linkCountersWorker, type LinkCounterJob } from '../../workers/link-counters.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { startWorkers } from '../../workers/index.ts';
import { useTestServer } from '../helpers/server.ts';
import { createLink, payThroughLink } from './helpers.ts';
import { eventually } from '../helpers/wait.ts';

// No workers run here unless a test starts them: jobs are run by hand, as a retry or a duplicate would.
const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const run = (name: 'views' | 'payment', data: LinkCounterJob) =>
  linkCountersWorker.process({ name, data, id: 'x' } as Job<LinkCounterJob>, t.s);
const counters = async (id: string) =>
  (await t.sql`select view_count, payment_count, total_collected_cents from payment_links where id = ${id}`)[0]!;
const views = (link: string, n: number, source: ViewRecord['source'] = 'DIRECT'): ViewRecord[] =>
  Array.from({ length: n }, () => ({ id: newId('plv'), link, source, at: Date.now() }));

describe('link-counters jobs', () => {
  it('when the same views job runs twice, then its views are counted once', async () => {
    const link = await createLink(t, key);
    const batch = views(link.id, 3);
    expect(await run('views', { views: batch })).toEqual({ added: 3 });
    expect(await run('views', { views: batch })).toEqual({ added: 0 });
    // A batch overlapping one already applied counts only its new views.
    expect(await run('views', { views: [...batch.slice(1), ...views(link.id, 2, 'QR')] })).toEqual({ added: 2 });
    expect(await counters(link.id)).toMatchObject({ view_count: 5 });
    expect(await t.sql`select count(*)::int as n from payment_link_views where payment_link_id = ${link.id}`).toEqual([{ n: 5 }]);
  });

  it('when a views job carries records of several loads each, then each record is one row and its loads are counted once', async () => {
    const link = await createLink(t, key);
    const batch: ViewRecord[] = [
      { id: newId('plv'), link: link.id, source: 'DIRECT', at: Date.now(), views: 40 },
      { id: newId('plv'), link: link.id, source: 'QR', at: Date.now(), views: 2 },
    ];
    expect(await run('views', { views: batch })).toEqual({ added: 42 });
    expect(await run('views', { views: batch })).toEqual({ added: 0 });
    expect(await counters(link.id)).toMatchObject({ view_count: 42 });
    expect(await t.sql`select source, views from payment_link_views where payment_link_id = ${link.id} order by source`).toEqual([
      { source: 'DIRECT', views: 40 },
      { source: 'QR', views: 2 },
    ]);
    // The repair pass counts the loads of the rows, not the rows.
    await t.sql`update payment_links set view_count = 0 where id = ${link.id}`;
    await reconcileCounters(t.sql, 0);
    expect(await counters(link.id)).toMatchObject({ view_count: 42 });
  });

  it('when the same payment job runs twice, then the payment is counted once', async () => {
    const link = await createLink(t, key);
    const { sessionId } = await payThroughLink(t, link.url);
    const [{ payment_id }] = (await t.sql`select payment_id from checkout_sessions where id = ${sessionId}`) as unknown as [{ payment_id: string }];
    expect(await run('payment', { paymentId: payment_id })).toEqual({ counted: true });
    expect(await run('payment', { paymentId: payment_id })).toEqual({ counted: false });
    expect(await counters(link.id)).toMatchObject({ payment_count: 1, total_collected_cents: 2500 });
  });

  it('when a payment job names a payment that is not a successful link payment, then nothing is counted', async () => {
    expect(await run('payment', { paymentId: newId('pay') })).toEqual({ counted: false });
  });
});

describe('batched page views', () => {
  it('when 10,000 views are recorded in a burst, then none is lost and view_count is exact', async () => {
    const workers = await startWorkers(t.s, [linkCountersWorker]);
    try {
      const [a, b] = [await createLink(t, key), await createLink(t, key)];
      const recorder = new ViewRecorder(t.s.queues, t.s.log);
      for (let i = 0; i < 10_000; i++) recorder.record(i % 4 === 0 ? b.id : a.id, i % 2 ? 'QR' : 'DIRECT');
      await recorder.close();
      await eventually(async () => {
        const [ca, cb] = [await counters(a.id), await counters(b.id)];
        return ca.view_count === 7_500 && cb.view_count === 2_500;
      }, 20_000);
      // One row per link and source of a batch, not per load: the burst was one batch.
      const rows = await t.sql<{ source: string; views: number }[]>`
        select source, views from payment_link_views where payment_link_id = ${a.id} order by source`;
      expect(rows).toEqual([
        { source: 'DIRECT', views: 2_500 },
        { source: 'QR', views: 5_000 },
      ]);

      // The same through the page: 1,000 loads, 50 at a time, every one answered.
      const link = await createLink(t, key);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        statuses.push(...(await Promise.all(Array.from({ length: 50 }, () => fetch(link.url).then(async (r) => (await r.text(), r.status))))));
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(1000);
      await eventually(async () => (await counters(link.id)).view_count === 1000, 20_000);
      const [stored] = await t.sql<{ n: number }[]>`select count(*)::int as n from payment_link_views where payment_link_id = ${link.id}`;
      expect(stored!.n).toBeLessThan(100);
    } finally {
      await workers.close();
    }
  });
});

describe('reconcile', () => {
  it('when counter jobs were lost with Redis, then the reconciler counts the payments from the payments rows', async () => {
    const link = await createLink(t, key, { quantity_limit: 10 });
    await payThroughLink(t, link.url);
    await payThroughLink(t, link.url);
    // Redis "flushed": the queued counter jobs are gone.
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
    if (keys.length) await t.s.redis.del(...keys);
    expect(await counters(link.id)).toMatchObject({ payment_count: 0 });

    // The reconcile job (every reconciler, as scheduled), once the payments are past the grace period.
    await t.sql`update payments set updated_at = now() - interval '1 minute' where payment_link_id = ${link.id}`;
    const repaired = (await reconcileWorker.process({} as Job, t.s)) as Record<string, number>;
    expect(repaired['payment-link-counters']).toBeGreaterThanOrEqual(2);
    expect(await counters(link.id)).toMatchObject({ payment_count: 2, total_collected_cents: 5000 });

    // A job that turns up late after the repair does not count again.
    const paid = await t.sql`select id from payments where payment_link_id = ${link.id} and status = 'SUCCEEDED'`;
    for (const p of paid) expect(await run('payment', { paymentId: p.id as string })).toEqual({ counted: false });
    expect(await reconcileCounters(t.sql, 0)).toBe(0);
    expect(await counters(link.id)).toMatchObject({ payment_count: 2, total_collected_cents: 5000 });
  });

  it('when counters drifted from the source rows, then the reconciler recomputes them', async () => {
    const link = await createLink(t, key);
    await run('views', { views: views(link.id, 4) });
    await payThroughLink(t, link.url);
    await reconcileCounters(t.sql, 0);
    await t.sql`update payment_links set view_count = 999, payment_count = 7, total_collected_cents = 1 where id = ${link.id}`;
    expect(await reconcileCounters(t.sql, 0)).toBe(1);
    // The payer's own page load is still a queued job (no worker runs here), not yet a view row.
    expect(await counters(link.id)).toMatchObject({ view_count: 4, payment_count: 1, total_collected_cents: 2500 });
  });
});
