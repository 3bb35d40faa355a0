// The webhook throttle benchmark (issue 26, point 2): a backlog of BENCH_THROTTLE_EVENTS events
// (default 20,000), each delivered to two endpoints of one account, one with rate_limit 10 and one
// unthrottled, drained by the service's workers. Measured:
// - the throttled endpoint's arrivals per second over a window of BENCH_THROTTLE_WINDOW_S seconds
//   (default 20: bounded, its whole backlog would take 2,000 s), the highest against its limit;
// - the unthrottled endpoint's throughput beside that throttled backlog, as a ratio to the same
//   endpoint draining the same backlog alone, measured first in the same run.
// The backlog is written with SQL (events and delivery rows, as the fan-out writes them) and its
// jobs added in bulk, as the reconcile pass would after an outage.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { API_VERSION } from '../src/events/presenter.ts';
import { newId } from '../src/lib/ids.ts';
import { DeliveryJobs, type ThrottleRoute } from '../src/webhooks/jobs.ts';
import { reserveSlots } from '../src/webhooks/throttle.ts';
import { startReceiver, type Receiver } from './webhooks.ts';
import { api, createAccountKey, environmentNote, fmtNum, fmtRatio, freshDatabase, say, serviceEnvNote, startService, table, verdict, writeSection, type BenchDb } from './lib.ts';

const SUITE = 'webhooks_throttle';
const RATE = 10;
const intEnv = (name: string, def: number) => {
  const v = Number((process.env[name] ?? '').replace(/[_,]/g, ''));
  return Number.isInteger(v) && v > 0 ? v : def;
};
const now = () => performance.timeOrigin + performance.now();

/** `n` events with a delivery to each of `endpointIds`, written straight to the tables; the delivery ids, interleaved by event. */
async function seed(db: BenchDb, accountId: string, endpointIds: string[], n: number): Promise<string[]> {
  const all: string[] = [];
  const created = Math.floor(Date.now() / 1000);
  for (let done = 0; done < n; done += 1000) {
    const events = Array.from({ length: Math.min(1000, n - done) }, () => newId('evt'));
    const rows = events.flatMap((e) => endpointIds.map((ep) => ({ id: newId('wd'), event: e, endpoint: ep })));
    await db.sql`
      insert into events (id, account_id, livemode, type, api_version, data, created_at)
      select id, ${accountId}, false, 'payment.succeeded', ${API_VERSION},
             json_build_object('object', json_build_object('id', 'pay_' || id, 'object', 'payment', 'livemode', false)), to_timestamp(${created})
      from unnest(${events}::text[]) as id`;
    await db.sql`
      insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at)
      select d, ${accountId}, false, e, ep, 'PENDING', now()
      from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.event)}::text[], ${rows.map((r) => r.endpoint)}::text[]) as x (d, e, ep)`;
    all.push(...rows.map((r) => r.id));
  }
  return all;
}

/** The jobs of `ids` as the reconcile pass adds them (jobs.ts): those of `throttled` reserve their slots and wait in the throttled queue. */
async function enqueue(jobs: DeliveryJobs, ids: string[], routes: Map<string, ThrottleRoute>): Promise<void> {
  for (let i = 0; i < ids.length; i += 5000) await jobs.add(ids.slice(i, i + 5000), routes);
}

/** Arrivals per whole second since `t0`, over `seconds` seconds. */
function perSecond(rx: Receiver, t0: number, seconds: number): number[] {
  const bins = Array<number>(seconds).fill(0);
  for (const times of rx.arrivals.values()) {
    for (const at of times) {
      const i = Math.floor((at - t0) / 1000);
      if (i >= 0 && i < seconds) bins[i]!++;
    }
  }
  return bins;
}

export async function run(): Promise<void> {
  const n = intEnv('BENCH_THROTTLE_EVENTS', 20_000);
  const windowS = intEnv('BENCH_THROTTLE_WINDOW_S', 20);
  const nRef = intEnv('BENCH_THROTTLE_REFERENCE', 5_000);
  const db = await freshDatabase(SUITE);
  const env = await environmentNote(db.sql);
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  const [slowRx, fastRx] = [await startReceiver(), await startReceiver()];
  const svc = await startService({ suite: SUITE, databaseUrl: db.url, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `bench_${SUITE}`;
  const queue = new Queue('webhook-delivery', { connection: redis, prefix });
  const throttledQueue = new Queue('webhook-throttled', { connection: redis, prefix });
  const jobs = new DeliveryJobs(queue, 600_000, throttledQueue, (endpointId, rate, count) => reserveSlots(redis, prefix, endpointId, rate, count));
  try {
    const fast = await api(svc.url, key, 'POST', '/v1/webhook-endpoints', { url: fastRx.url, enabled_events: ['*'] });

    // The reference: the same endpoint alone, before and after the measured run (their mean evens out a drifting load).
    const reference = async (): Promise<number> => {
      const ids = await seed(db, accountId, [fast.id], nRef);
      const from = fastRx.count();
      const start = now();
      await enqueue(jobs, ids, new Map());
      await fastRx.waitFor(() => fastRx.count() - from >= nRef, 600_000);
      return nRef / ((now() - start) / 1000);
    };
    say(`webhooks-throttle: reference, ${fmtNum(nRef)} deliveries to the unthrottled endpoint alone`);
    const refBefore = await reference();

    const slow = await api(svc.url, key, 'POST', '/v1/webhook-endpoints', { url: slowRx.url, enabled_events: ['*'], rate_limit: RATE });
    say(`webhooks-throttle: ${fmtNum(n)} events to both endpoints (rate_limit ${RATE} on one), measured over ${windowS} s`);
    const both = await seed(db, accountId, [slow.id, fast.id], n);
    const routes = new Map<string, ThrottleRoute>(both.filter((_, i) => i % 2 === 0).map((id) => [id, { endpointId: slow.id, rate: RATE }]));
    const before = fastRx.count();
    const t0 = now();
    await enqueue(jobs, both, routes);
    await fastRx.waitFor(() => fastRx.count() - before >= n, 600_000);
    const fastDoneS = (now() - t0) / 1000;
    const besideRate = n / fastDoneS;
    await slowRx.waitFor(() => now() - t0 >= windowS * 1000 + 500, windowS * 1000 + 5000).catch(() => {});
    const bins = perSecond(slowRx, t0, windowS);
    const maxPerSecond = Math.max(...bins);
    const inWindow = bins.reduce((a, b) => a + b, 0);
    // Sliding: the most arrivals within any 1,000 ms, over the window.
    const times = [...slowRx.arrivals.values()].flat().filter((at) => at >= t0 && at < t0 + windowS * 1000).sort((a, b) => a - b);
    let maxSliding = 0;
    for (let i = 0, j = 0; j < times.length; j++) {
      while (times[j]! - times[i]! >= 1000) i++;
      maxSliding = Math.max(maxSliding, j - i + 1);
    }
    say(`webhooks-throttle: reference again, ${fmtNum(nRef)} deliveries to the unthrottled endpoint alone`);
    const refAfter = await reference();
    const aloneRate = (refBefore + refAfter) / 2;
    const [throttled] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${slow.id} and status = 'SUCCEEDED'`;

    const md = [
      '## Webhook throttle (issue 26)',
      '',
      env,
      serviceEnvNote(),
      '',
      `Service: \`npm start\` (one process, webhook worker concurrency 50). Backlog: ${fmtNum(n)} events written with SQL, each with a`,
      `delivery to two endpoints of one account, their jobs added in bulk as the reconcile pass adds them after an outage (the throttled`,
      "endpoint's reserve their slots in one call per batch and wait in the webhook-throttled queue). One",
      `endpoint has \`rate_limit: ${RATE}\`, the other none; each answers through its own local receiver process (200 at once).`,
      '',
      table(
        ['Measure', 'Result', 'Reference', 'Ratio', 'Target', 'Verdict'],
        [
          [`Throttled endpoint, most arrivals in one second (${windowS} s window)`, fmtNum(maxPerSecond), `rate_limit ${RATE}`, fmtRatio(maxPerSecond, RATE), '≤ 1.00', verdict(maxPerSecond <= RATE)],
          ['Throttled endpoint, most arrivals within any 1,000 ms', fmtNum(maxSliding), `rate_limit ${RATE}`, fmtRatio(maxSliding, RATE), '≤ 1.00', verdict(maxSliding <= RATE)],
          [`Throttled endpoint, mean over the window`, `${(inWindow / windowS).toFixed(2)}/s`, `rate_limit ${RATE}`, fmtRatio(inWindow / windowS, RATE), '', ''],
          [`Unthrottled endpoint, deliveries/s beside the throttled backlog`, fmtNum(besideRate), `${fmtNum(aloneRate)} (alone, same run)`, fmtRatio(besideRate, aloneRate), '≥ 0.8', verdict(besideRate >= 0.8 * aloneRate)],
        ],
      ),
      '',
      `Reference: ${fmtNum(nRef)} deliveries to the unthrottled endpoint alone, ${fmtNum(refBefore)}/s before and ${fmtNum(refAfter)}/s after the measured run (their mean).`,
      `The unthrottled endpoint's ${fmtNum(n)} deliveries were all in after ${fastDoneS.toFixed(1)} s; the throttled one had ${fmtNum(inWindow)} in the`,
      `${windowS} s window (${fmtNum(throttled!.n)} recorded SUCCEEDED when measured). Its arrivals per second: ${bins.join(' ')}.`,
      'Its other deliveries were left waiting (the run stops there: its whole backlog takes n / rate seconds). A throttled job',
      'waits as a delayed job in its own queue until its slot, so it holds no worker and no other job waits behind it; the',
      `unthrottled ratio is the cost of ${fmtNum(n)} more jobs added. Sizes: BENCH_THROTTLE_EVENTS=${n}, BENCH_THROTTLE_WINDOW_S=${windowS}, BENCH_THROTTLE_REFERENCE=${nRef}.`,
    ].join('\n');
    await writeSection('webhooks-throttle', md);
    say(`webhooks-throttle: throttled max ${maxPerSecond}/s (sliding ${maxSliding}); unthrottled ${fmtNum(besideRate)}/s beside it vs ${fmtNum(aloneRate)}/s alone`);
  } finally {
    await svc.stop();
    // The throttled endpoint's waiting jobs go with the bench's keys.
    await queue.obliterate({ force: true }).catch(() => {});
    await throttledQueue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    await throttledQueue.close();
    redis.disconnect();
    slowRx.stop();
    fastRx.stop();
    await db.close();
  }
}
