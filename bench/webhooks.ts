// The webhooks benchmark (issue 5, point 12):
// 1. deliveries per second to a local receiver at concurrency 50 (the worker's concurrency), as a
//    ratio to a bare got loop posting the same bodies to the same receiver with 50 in flight;
// 2. at idle, the time from the API call that causes an event (POST /v1/checkout/sessions/:id/expire)
//    to its first attempt arriving at the receiver.
// Issue 28, point 5: interleaved rounds with CPU per delivery and an optional A/B (see run()).
// Sizes: BENCH_WEBHOOK_DELIVERIES (default 20,000), BENCH_WEBHOOK_ROUNDS (default 3) and
// BENCH_WEBHOOK_SAMPLES (default 300).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Queue } from 'bullmq';
import got from 'got';
import { Redis } from 'ioredis';
import { API_VERSION } from '../src/events/presenter.ts';
import { newId } from '../src/lib/ids.ts';
import { DeliveryJobs } from '../src/webhooks/jobs.ts';
import { Lane } from '../src/webhooks/lane.ts';
import {
  createAccountKey,
  environmentNote,
  fmtMs,
  fmtNum,
  fmtRatio,
  freshDatabase,
  processCpuSeconds,
  REDIS_URL,
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
  type Service,
} from './lib.ts';

const CONCURRENCY = 50;
const TARGETS = { ratio: 0.8, p50: 50, p99: 50 };
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

/**
 * `n` events, one delivery each to `endpointId`, written straight to the tables (no jobs yet). With
 * `dueInSeconds`, the rows are due that much later, so that the reconcile pass leaves them to the
 * run that adds their jobs (a job runs a PENDING delivery whenever it is due).
 */
export async function seedDeliveries(db: BenchDb, accountId: string, endpointId: string, object: unknown, n: number, dueInSeconds = 0) {
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
      select d, ${accountId}, false, e, ${endpointId}, 'PENDING', now() + make_interval(secs => ${dueInSeconds}) from unnest(${dids}::text[], ${ids}::text[]) as x (d, e)`;
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

/** One service measured: this checkout, a baseline checkout (A/B), or this one with other variables. */
interface Contender {
  name: string;
  svc: Service;
  db: BenchDb;
  accountId: string;
  key: string;
  endpointId: string;
  queue: Queue;
  /** Null for a baseline from before the first-attempt lane. */
  lane: Lane | null;
  /** Delivery ids seeded for each round. */
  rounds: string[][];
}

interface Tally {
  deliveries: number;
  seconds: number;
  /** CPU seconds: the process (service or this bench for bare got), its Postgres backends, Redis. */
  cpu: number;
  pg: number;
  redis: number;
}
const emptyTally = (): Tally => ({ deliveries: 0, seconds: 0, cpu: 0, pg: 0, redis: 0 });

/** CPU seconds used so far by the Postgres backends connected to one database (Linux /proc). */
async function backendsCpu(db: BenchDb): Promise<Map<number, number>> {
  const rows = await db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`;
  return new Map(rows.map(({ pid }) => [pid, processCpuSeconds(pid)] as const).filter(([, c]) => !Number.isNaN(c)));
}
async function backendsUsed(db: BenchDb, before: Map<number, number>): Promise<number> {
  let used = 0;
  for (const [pid, cpu] of await backendsCpu(db)) used += cpu - (before.get(pid) ?? 0);
  return used;
}

/**
 * Interleaved rounds (issue 28, point 5): every round runs the bare got loop and each service on
 * `n` deliveries, in an order that rotates (the services not measured stay up, idle: a BullMQ worker
 * paused with SIGSTOP lost its locks and crawled once resumed).
 * Rates are pooled over the rounds; CPU per delivery is read from /proc for the process, the
 * service database's Postgres backends and the Redis server.
 * Sizes: BENCH_WEBHOOK_DELIVERIES per run (default 20,000), BENCH_WEBHOOK_ROUNDS (default 3),
 * BENCH_WEBHOOK_SAMPLES latency samples per service (default 300).
 * A/B in the same run: BENCH_WEBHOOK_BASELINE_DIR=<another checkout with node_modules> (named by
 * BENCH_WEBHOOK_BASELINE_NAME), BENCH_WEBHOOK_VARIANT_ENV="K=V …" (this service with those variables).
 */
export async function run(_settings: BenchSettings): Promise<void> {
  const n = intEnv('BENCH_WEBHOOK_DELIVERIES', 20_000);
  const samples = intEnv('BENCH_WEBHOOK_SAMPLES', 300);
  const roundsN = intEnv('BENCH_WEBHOOK_ROUNDS', 3);
  const baselineDir = process.env.BENCH_WEBHOOK_BASELINE_DIR;
  const variantEnv = process.env.BENCH_WEBHOOK_VARIANT_ENV ?? '';
  const specs: Array<{ name: string; instance?: string; cwd?: string; env?: Record<string, string> }> = [{ name: 'service' }];
  if (baselineDir) specs.push({ name: `baseline (${process.env.BENCH_WEBHOOK_BASELINE_NAME ?? path.basename(baselineDir)})`, instance: 'baseline', cwd: baselineDir });
  if (variantEnv) specs.push({ name: `service with ${variantEnv}`, instance: 'variant', env: Object.fromEntries(variantEnv.split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) });

  const rx = await startReceiver();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? Number.NaN);
  const contenders: Contender[] = [];
  let env = '';
  try {
    for (const sp of specs) {
      const db = await freshDatabase(sp.instance ? `webhooks_${sp.instance}` : 'webhooks');
      if (!env) env = await environmentNote(db.sql);
      const { accountId, key } = await createAccountKey(db.sql, 'test');
      const svc = await startService({ suite: 'webhooks', instance: sp.instance, cwd: sp.cwd, databaseUrl: db.url, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', ...sp.env } });
      const prefix = `bench_webhooks${sp.instance ? `_${sp.instance}` : ''}`;
      const queue = new Queue('webhook-delivery', { connection: redis, prefix });
      // Each contender's deliveries are enqueued as its own code enqueues them: into the first-attempt
      // lane (issue 28.5), or, for a checkout from before it, as one BullMQ job each.
      const lane = existsSync(path.join(sp.cwd ?? '.', 'src/webhooks/lane.ts')) ? new Lane(prefix) : null;
      const endpoint = await api(svc.url, key, 'POST', '/v1/webhook-endpoints', { url: rx.url, enabled_events: ['*'] });
      contenders.push({ name: sp.name, svc, db, accountId, key, endpointId: endpoint.id, queue, lane, rounds: [] });
    }

    // Latency at idle, one service at a time.
    const latencies: Array<Awaited<ReturnType<typeof measureLatency>>> = [];
    for (const c of contenders) {
      say(`webhooks: latency of ${c.name}, ${samples} expire calls one at a time`);
      latencies.push(await measureLatency(c.db, c.svc.url, c.key, rx, samples));
    }

    say(`webhooks: throughput, ${roundsN} rounds of ${fmtNum(n)} deliveries per contender`);
    let bodies: string[] = [];
    for (const [i, c] of contenders.entries()) {
      for (let r = 0; r < roundsN; r++) {
        // Not due for a day: seeded ahead of their round, they must not be sent by the reconcile pass meanwhile.
        const seeded = await seedDeliveries(c.db, c.accountId, c.endpointId, latencies[i]!.session, n, 86_400);
        c.rounds.push(seeded.deliveryIds);
        if (i === 0 && r === 0) bodies = seeded.bodies;
      }
    }
    await bareGot(rx.url, bodies.slice(0, Math.min(2000, n))); // warm-up

    const names = ['bare got', ...contenders.map((c) => c.name)];
    const tallies = new Map(names.map((nm) => [nm, emptyTally()]));
    for (let r = 0; r < roundsN; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]!);
      for (const nm of order) {
        const t = tallies.get(nm)!;
        const redis0 = processCpuSeconds(redisPid);
        const seconds0 = t.seconds;
        if (nm === 'bare got') {
          const me0 = process.cpuUsage();
          const t0 = now();
          await bareGot(rx.url, bodies);
          t.seconds += (now() - t0) / 1000;
          const me = process.cpuUsage(me0);
          t.cpu += (me.user + me.system) / 1e6;
        } else {
          const c = contenders.find((x) => x.name === nm)!;
          {
            const ids = c.rounds[r]!;
            // Into the lane, or as a BullMQ job each for a baseline without one (DeliveryJobs.add chooses).
            const jobs = new DeliveryJobs(c.queue, 600_000, undefined, undefined, c.lane ? { lane: c.lane, redis } : undefined);
            const pg0 = await backendsCpu(c.db);
            const cpu0 = c.svc.cpuSeconds();
            const before = rx.count();
            const t0 = now();
            for (let i = 0; i < ids.length; i += 5000) await jobs.add(ids.slice(i, i + 5000));
            await rx.waitFor(() => rx.count() - before >= n, 600_000);
            t.seconds += (now() - t0) / 1000;
            // The last attempts' records commit just after their requests arrive.
            await new Promise((res) => setTimeout(res, 300));
            t.cpu += c.svc.cpuSeconds() - cpu0;
            t.pg += await backendsUsed(c.db, pg0);
          }
        }
        t.redis += processCpuSeconds(redisPid) - redis0;
        t.deliveries += n;
        say(`webhooks: round ${r + 1}, ${nm}: ${fmtNum(n / (t.seconds - seconds0))}/s`);
      }
    }
    const rate = (nm: string) => tallies.get(nm)!.deliveries / tallies.get(nm)!.seconds;
    const us = (nm: string, f: keyof Tally) => fmtNum((tallies.get(nm)![f] / tallies.get(nm)!.deliveries) * 1e6);
    const bare = rate('bare got');
    const done: number[] = [];
    for (const c of contenders) {
      const all = c.rounds.flat();
      const [row] = await c.db.sql<{ ok: number }[]>`select count(*)::int as ok from webhook_deliveries where id = any(${all}::text[]) and status = 'SUCCEEDED'`;
      done.push(row!.ok);
    }
    const main = contenders[0]!;
    const ratio = rate(main.name) / bare;
    const lat = latencies[0]!;

    const md = [
      '## Webhooks (issue 5; issue 28, point 5)',
      '',
      env,
      serviceEnvNote(),
      '',
      `Service: \`npm start\` (web and workers in one process, webhook worker concurrency ${CONCURRENCY}, DB_POOL_MAX default), WEBHOOK_ALLOW_INSECURE_TARGETS=true`,
      `to reach the local receiver, which runs in its own process and answers 200 at once. The reference is a bare \`got\` loop with the same`,
      `concurrency (${CONCURRENCY} in flight) posting the same bodies to the same receiver. ${roundsN} interleaved rounds of ${fmtNum(n)} deliveries each,`,
      'the order rotating every round; the services not being measured stay up, idle.',
      '',
      table(
        ['Measure', 'Result', 'Reference', 'Ratio', 'Target', 'Verdict'],
        [
          [`Deliveries/s, ${fmtNum(n)} signed deliveries queued at once`, fmtNum(rate(main.name)), `${fmtNum(bare)} (bare got, ${CONCURRENCY} in flight)`, fmtRatio(rate(main.name), bare), `≥ ${TARGETS.ratio}`, verdict(ratio >= TARGETS.ratio)],
          [`API call → first attempt arrives, p50 (${samples} at idle)`, fmtMs(lat.p50), '', '', `< ${TARGETS.p50} ms`, verdict(lat.p50 < TARGETS.p50)],
          ['API call → first attempt arrives, p99', fmtMs(lat.p99), '', '', `< ${TARGETS.p99} ms`, verdict(lat.p99 < TARGETS.p99)],
        ],
      ),
      '',
      'Per contender, pooled over the rounds (CPU per delivery from /proc: the process, which is this bench for bare got; the',
      "Postgres backends of the service's database; the Redis server, whoever else used it meanwhile):",
      '',
      table(
        ['Contender', 'Deliveries/s', '× bare got', 'CPU µs/delivery, process', 'Postgres', 'Redis', 'Latency p50 / p99 / max', 'SUCCEEDED'],
        names.map((nm) => {
          const i = contenders.findIndex((c) => c.name === nm);
          const l = latencies[i];
          return [nm, fmtNum(rate(nm)), fmtRatio(rate(nm), bare), us(nm, 'cpu'), i < 0 ? '' : us(nm, 'pg'), us(nm, 'redis'), l ? `${fmtMs(l.p50)} / ${fmtMs(l.p99)} / ${fmtMs(l.max)}` : '', i < 0 ? '' : `${fmtNum(done[i]!)} of ${fmtNum(n * roundsN)}`];
        }),
      ),
      '',
      'The throughput run of a service counts from the first delivery enqueued (delivery rows already in Postgres, pushed into',
      'the first-attempt lane as the fan-out pushes them; a baseline from before the lane gets a BullMQ job each, addBulk) to',
      'the last request arriving; each delivery loads its row, signs, POSTs, and records the attempt.',
      'The latency is measured from just before the expire call to the arrival of its `checkout.session.expired`.',
      `Reproduce: \`BENCH_WEBHOOK_DELIVERIES=${n} BENCH_WEBHOOK_ROUNDS=${roundsN} BENCH_WEBHOOK_SAMPLES=${samples}${baselineDir ? ' BENCH_WEBHOOK_BASELINE_DIR=…' : ''}${variantEnv ? ` BENCH_WEBHOOK_VARIANT_ENV="${variantEnv}"` : ''} npm run bench -- webhooks\`.`,
    ].join('\n');
    await writeSection('webhooks', md);
    for (const nm of names) say(`webhooks: ${nm}: ${fmtNum(rate(nm))}/s (× bare got ${fmtRatio(rate(nm), bare)}), CPU µs/delivery ${us(nm, 'cpu')} + pg ${us(nm, 'pg')} + redis ${us(nm, 'redis')}`);
    say(`webhooks: latency p50 ${fmtMs(lat.p50)}, p99 ${fmtMs(lat.p99)}`);
  } finally {
    for (const c of contenders) {
      await c.queue.close();
      await c.svc.stop();
      await c.db.close();
    }
    redis.disconnect();
    rx.stop();
  }
}
