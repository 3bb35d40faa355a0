// The webhooks benchmark (issue 5, point 12):
// 1. deliveries per second to a local receiver at concurrency 50 (the worker's concurrency), as a
//    ratio to a bare got loop posting the same bodies to the same receiver with 50 in flight;
// 2. at idle, the time from the API call that causes an event (POST /v1/checkout/sessions/:id/expire)
//    to its first attempt arriving at the receiver.
// Sizes: BENCH_WEBHOOK_DELIVERIES (default 20,000) and BENCH_WEBHOOK_SAMPLES (default 300).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Queue } from 'bullmq';
import got from 'got';
import { Redis } from 'ioredis';
import { API_VERSION } from '../src/events/presenter.ts';
import { newId } from '../src/lib/ids.ts';
import { DeliveryJobs, DELIVER_JOB } from '../src/webhooks/jobs.ts';
import {
  createAccountKey,
  environmentNote,
  fmtMs,
  fmtNum,
  fmtRatio,
  freshDatabase,
  ROOT,
  api,
  say,
  serviceEnvNote,
  startService,
  table,
  verdict,
  writeSection,
  type BenchDb,
  type BenchSettings,
} from './lib.ts';

const CONCURRENCY = 50;
const TARGETS = { ratio: 0.5, p50: 50, p99: 250 };
const intEnv = (name: string, def: number) => {
  const v = Number((process.env[name] ?? '').replace(/[_,]/g, ''));
  return Number.isInteger(v) && v > 0 ? v : def;
};

export interface Receiver {
  url: string;
  /** Arrival times by event id ('-' for requests without one). */
  arrivals: Map<string, number[]>;
  count(): number;
  waitFor(pred: () => boolean, timeoutMs: number): Promise<void>;
  stop(): void;
}

export async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = spawn(process.execPath, ['bench/webhooks-receiver.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const arrivals = new Map<string, number[]>();
  let total = 0;
  let wake: (() => void) | null = null;
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      const [a, b] = line.split(' ');
      if (a === 'port') return resolve(Number(b));
      total++;
      const list = arrivals.get(a!) ?? [];
      list.push(Number(b));
      arrivals.set(a!, list);
      wake?.();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    count: () => total,
    async waitFor(pred, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${total} requests so far)`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 20);
        });
      }
    },
    stop: () => void child.kill('SIGTERM'),
  };
}

const now = () => performance.timeOrigin + performance.now();

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Latency: one expire call at a time, each waiting for its event to reach the receiver. */
async function measureLatency(db: BenchDb, svcUrl: string, key: string, rx: Receiver, samples: number) {
  const sessions: string[] = [];
  for (let i = 0; i < samples; i++) {
    sessions.push((await api(svcUrl, key, 'POST', '/v1/checkout/sessions', { amount: 1000 + i, currency: 'usd', success_url: 'https://shop.example.com/ok' })).id);
  }
  const latencies: number[] = [];
  let lastSession: unknown;
  for (const id of sessions) {
    const t0 = now();
    lastSession = await api(svcUrl, key, 'POST', `/v1/checkout/sessions/${id}/expire`);
    const [ev] = await db.sql<{ id: string }[]>`
      select id from events where type = 'checkout.session.expired' and data->'object'->>'id' = ${id}`;
    await rx.waitFor(() => rx.arrivals.has(ev!.id), 10_000);
    latencies.push(rx.arrivals.get(ev!.id)![0]! - t0);
    await new Promise((r) => setTimeout(r, 10)); // idle between samples
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1]!, session: lastSession };
}

/** `n` events, one delivery each to `endpointId`, written straight to the tables (no jobs yet). */
export async function seedDeliveries(db: BenchDb, accountId: string, endpointId: string, object: unknown, n: number) {
  const bodies: string[] = [];
  const deliveryIds: string[] = [];
  const created = Math.floor(Date.now() / 1000);
  for (let done = 0; done < n; done += 1000) {
    const ids: string[] = [];
    const dids: string[] = [];
    for (let i = done; i < Math.min(n, done + 1000); i++) {
      const id = newId('evt');
      ids.push(id);
      dids.push(newId('wd'));
      bodies.push(JSON.stringify({ id, object: 'event', livemode: false, type: 'checkout.session.expired', api_version: API_VERSION, data: { object }, created }));
    }
    await db.sql`
      insert into events (id, account_id, livemode, type, api_version, data, created_at)
      select id, ${accountId}, false, 'checkout.session.expired', ${API_VERSION}, ${JSON.stringify({ object })}::text::json, to_timestamp(${created})
      from unnest(${ids}::text[]) as id`;
    await db.sql`
      insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at)
      select d, ${accountId}, false, e, ${endpointId}, 'PENDING', now() from unnest(${dids}::text[], ${ids}::text[]) as x (d, e)`;
    deliveryIds.push(...dids);
  }
  return { bodies, deliveryIds };
}

/** The reference: got posting the same bodies to the same receiver, 50 requests in flight. */
async function bareGot(url: string, bodies: string[]): Promise<number> {
  let next = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await got.post(url, { body, headers: { 'content-type': 'application/json' }, retry: { limit: 0 }, throwHttpErrors: false });
        if (res.statusCode !== 200) throw new Error(`bare got: HTTP ${res.statusCode}`);
      }
    }),
  );
  return bodies.length / ((now() - t0) / 1000);
}

export async function run(_settings: BenchSettings): Promise<void> {
  const n = intEnv('BENCH_WEBHOOK_DELIVERIES', 20_000);
  const samples = intEnv('BENCH_WEBHOOK_SAMPLES', 300);
  const db = await freshDatabase('webhooks');
  const env = await environmentNote(db.sql);
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  const rx = await startReceiver();
  const svc = await startService({ suite: 'webhooks', databaseUrl: db.url, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const queue = new Queue('webhook-delivery', { connection: redis, prefix: 'bench_webhooks' });
  try {
    const endpoint = await api(svc.url, key, 'POST', '/v1/webhook-endpoints', { url: rx.url, enabled_events: ['*'] });

    say(`webhooks: latency, ${samples} expire calls one at a time`);
    const lat = await measureLatency(db, svc.url, key, rx, samples);

    say(`webhooks: throughput, ${fmtNum(n)} deliveries`);
    const { bodies, deliveryIds } = await seedDeliveries(db, accountId, endpoint.id, lat.session, n);
    await bareGot(rx.url, bodies.slice(0, Math.min(2000, n))); // warm-up
    // The reference runs before and after the service's run; their mean evens out a drifting load.
    const bareBefore = await bareGot(rx.url, bodies);
    const jobs = new DeliveryJobs(queue, 600_000);
    const before = rx.count();
    const t0 = now();
    for (let i = 0; i < deliveryIds.length; i += 5000) {
      await queue.addBulk(deliveryIds.slice(i, i + 5000).map((id) => ({ name: DELIVER_JOB, data: { deliveryId: id }, opts: jobs.options(id) })));
    }
    await rx.waitFor(() => rx.count() - before >= n, 600_000);
    const service = n / ((now() - t0) / 1000);
    const bareAfter = await bareGot(rx.url, bodies);
    const bare = (bareBefore + bareAfter) / 2;
    const [done] = await db.sql<{ ok: number }[]>`
      select count(*)::int as ok from webhook_deliveries where id = any(${deliveryIds}::text[]) and status = 'SUCCEEDED'`;
    const ratio = service / bare;

    const md = [
      '## Webhooks (issue 5)',
      '',
      env,
      serviceEnvNote(),
      '',
      `Service: \`npm start\` (web and workers in one process, worker concurrency ${CONCURRENCY}), WEBHOOK_ALLOW_INSECURE_TARGETS=true to reach the`,
      'local receiver, which runs in its own process and answers 200 at once.',
      '',
      table(
        ['Measure', 'Result', 'Reference', 'Ratio', 'Target', 'Verdict'],
        [
          [`Deliveries/s, ${fmtNum(n)} signed deliveries queued at once`, fmtNum(service), `${fmtNum(bare)} (bare got, 50 in flight)`, fmtRatio(service, bare), `≥ ${TARGETS.ratio}`, verdict(ratio >= TARGETS.ratio)],
          [`API call → first attempt arrives, p50 (${samples} at idle)`, fmtMs(lat.p50), '', '', `< ${TARGETS.p50} ms`, verdict(lat.p50 < TARGETS.p50)],
          ['API call → first attempt arrives, p99', fmtMs(lat.p99), '', '', `< ${TARGETS.p99} ms`, verdict(lat.p99 < TARGETS.p99)],
        ],
      ),
      '',
      `Bare got runs: ${fmtNum(bareBefore)}/s before and ${fmtNum(bareAfter)}/s after the service's run (the reference is their mean).`,
      `Deliveries recorded SUCCEEDED afterwards: ${fmtNum(done!.ok)} of ${fmtNum(n)}. Slowest sample: ${fmtMs(lat.max)}.`,
      'The throughput run counts from the first job added (BullMQ addBulk of jobs for delivery rows already in',
      'Postgres) to the last request arriving; each delivery loads its row, signs, POSTs, and records the attempt.',
      'The latency is measured from just before the expire call to the arrival of its `checkout.session.expired`.',
      `Sizes: BENCH_WEBHOOK_DELIVERIES=${n}, BENCH_WEBHOOK_SAMPLES=${samples}.`,
    ].join('\n');
    await writeSection('webhooks', md);
    say(`webhooks: ${fmtNum(service)}/s vs bare ${fmtNum(bare)}/s (ratio ${fmtRatio(service, bare)}); latency p50 ${fmtMs(lat.p50)}, p99 ${fmtMs(lat.p99)}`);
  } finally {
    await queue.close();
    redis.disconnect();
    await svc.stop();
    rx.stop();
    await db.close();
  }
}
