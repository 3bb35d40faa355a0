// Capacity per core (issue 23, point 7): what one core of each process does, read from the CPU each
// party spends per request or delivery (Linux /proc), not from the wall-clock rate alone: on this
// shared 2-core machine the load generator, Postgres, Redis and other work take cores from the
// service, so req/s measured here understate a dedicated core, while CPU time per unit does not
// depend on who else runs. Per core of the service = 1 s / the service's CPU per unit; the whole
// stack per core = 1 s / (service + Postgres + Redis CPU per unit). The wall-clock rate of the same
// run is reported beside them.
// Sizes: BENCH_SECONDS per HTTP measurement; BENCH_CAPACITY_DELIVERIES (default 10,000).
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DeliveryJobs } from '../src/webhooks/jobs.ts';
import { Lane } from '../src/webhooks/lane.ts';
import {
  api,
  createAccountKey,
  environmentNote,
  fmtNum,
  freshDatabase,
  load,
  processCpuSeconds,
  say,
  serviceEnvNote,
  startService,
  table,
  writeSection,
  type BenchDb,
  type BenchSettings,
  type Service,
} from './lib.ts';
import { seedDeliveries, startReceiver } from './webhooks.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Row {
  what: string;
  rate: number;
  serviceUs: number;
  pgUs: number;
  redisUs: number;
}

/** CPU seconds of the service, its Postgres backends and the Redis server around `work`, per unit. */
async function perUnit(svc: Service, db: BenchDb, redisPid: number, work: () => Promise<{ units: number; rate: number }>, what: string): Promise<Row> {
  // Backends come and go with the pool: read the ones alive before and after and keep the larger
  // delta per pid (a backend that exits takes its CPU with it: the pool is fixed-size, so few do).
  const pidsBefore = await db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`;
  const pg0 = new Map(pidsBefore.map((r) => [r.pid, processCpuSeconds(r.pid)]));
  const svc0 = svc.cpuSeconds();
  const redis0 = processCpuSeconds(redisPid);
  const { units, rate } = await work();
  const svcUsed = svc.cpuSeconds() - svc0;
  const redisUsed = processCpuSeconds(redisPid) - redis0;
  const pidsAfter = await db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`;
  let pgUsed = 0;
  for (const { pid } of pidsAfter) pgUsed += (processCpuSeconds(pid) || 0) - (pg0.get(pid) ?? 0);
  const us = (s: number) => (s * 1e6) / units;
  return { what, rate, serviceUs: us(svcUsed), pgUs: us(pgUsed), redisUs: us(redisUsed) };
}

export async function run(settings: BenchSettings): Promise<void> {
  const deliveries = Number(process.env.BENCH_CAPACITY_DELIVERIES ?? 10_000);
  const db = await freshDatabase('capacity');
  const env = await environmentNote(db.sql);
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  const rx = await startReceiver();
  const svc = await startService({ suite: 'capacity', databaseUrl: db.url, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
  const queue = new Queue('webhook-delivery', { connection: redis, prefix: 'bench_capacity' });
  const rows: Row[] = [];
  try {
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await api(svc.url, key, 'POST', '/v1/customers', { email: `c${i}@example.com`, first_name: 'Customer', last_name: String(i) })).id);
    await api(svc.url, key, 'POST', '/v1/payment-links', { amount: 2500, currency: 'usd', name: 'Capacity', slug: 'capacity-page' });
    const base = { url: svc.url, key };
    const measure = async (what: string, work: () => Promise<{ units: number; rate: number }>) => {
      say(`capacity: ${what}`);
      rows.push(await perUnit(svc, db, redisPid, work, what));
    };
    const http = (what: string, spec: Parameters<typeof load>[0]) =>
      measure(what, async () => {
        const r = await load(spec, settings);
        if (r.non2xx || r.errors) throw new Error(`${what}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        return { units: r.total, rate: r.rps };
      });
    await http('`GET /v1/customers/:id`', { ...base, path: `/v1/customers/${ids[0]}`, next: () => ({ path: `/v1/customers/${ids[Math.floor(Math.random() * ids.length)]}` }) });
    await http('`POST /v1/customers`', { ...base, method: 'POST', path: '/v1/customers', body: '{"email":"cap-[<id>]@example.com","first_name":"New","last_name":"Customer"}', idReplacement: true });
    await http('`POST /v1/checkout/sessions`', {
      ...base,
      method: 'POST',
      path: '/v1/checkout/sessions',
      body: { currency: 'usd', success_url: 'https://merchant.example/thanks', line_items: [{ name: 'Teapot', quantity: 1, amount: 3200 }] },
    });
    await http('`GET /l/:slug` (hosted link page)', { url: svc.url, path: '/l/capacity-page' });

    const endpoint = await api(svc.url, key, 'POST', '/v1/webhook-endpoints', { url: rx.url, enabled_events: ['*'] });
    const { deliveryIds } = await seedDeliveries(db, accountId, endpoint.id, { id: 'cs_capacity', object: 'checkout.session' }, deliveries);
    // Enqueued as the fan-out enqueues them: into the first-attempt lane (src/webhooks/lane.ts).
    const jobs = new DeliveryJobs(queue, 600_000, undefined, undefined, { lane: new Lane('bench_capacity'), redis });
    await measure('Webhook deliveries (signed POST to a local receiver, attempt recorded)', async () => {
      const before = rx.count();
      const t0 = performance.now();
      for (let i = 0; i < deliveryIds.length; i += 5000) await jobs.add(deliveryIds.slice(i, i + 5000));
      await rx.waitFor(() => rx.count() - before >= deliveries, 600_000);
      return { units: deliveries, rate: deliveries / ((performance.now() - t0) / 1000) };
    });

    const f = (n: number) => fmtNum(Math.round(n));
    const md = [
      '## Capacity per core (issue 23)',
      '',
      `${env}.`,
      ...(serviceEnvNote() ? [serviceEnvNote()] : []),
      '',
      'The service is `npm start` (web and workers in one process). CPU per unit is read from /proc for the',
      'service process, the Postgres backends of its database and the Redis server, over the whole',
      `measurement (HTTP: ${settings.seconds} s at ${settings.connections} connections after a warm-up;`,
      `deliveries: ${fmtNum(deliveries)} queued at once, worker concurrency 50, a receiver answering 200 at once).`,
      'Background work caused by the requests in that window (expiry jobs, processor sweeps) is counted.',
      '',
      table(
        ['Work', 'Measured here (2 shared cores)', 'CPU µs per unit: service / Postgres / Redis', 'Per core of the service process', 'Per core of the whole stack'],
        rows.map((r) => [
          r.what,
          `${f(r.rate)}/s`,
          `${f(r.serviceUs)} / ${f(r.pgUs)} / ${f(r.redisUs)}`,
          `${f(1e6 / r.serviceUs)}/s`,
          `${f(1e6 / (r.serviceUs + r.pgUs + r.redisUs))}/s`,
        ]),
      ),
      '',
      '"Per core of the service process" is what one core of web or worker processes answers when',
      'Postgres and Redis have cores of their own (Node runs requests on one thread; its garbage',
      "collector's threads add a little beside it, which is why a process can pass it); \"per core of",
      'the whole stack" is the rate per core when the service, Postgres and Redis share the cores.',
      'Neither counts the load generator. docs/operations.md sizes deployments from these numbers.',
      `Reproduce: \`BENCH_SECONDS=${settings.seconds} npm run bench -- capacity\`.`,
    ].join('\n');
    await writeSection('capacity', md);
    for (const r of rows) say(`capacity: ${r.what}: ${f(r.rate)}/s here; ${f(1e6 / r.serviceUs)}/s per service core; ${f(1e6 / (r.serviceUs + r.pgUs + r.redisUs))}/s per stack core`);
  } finally {
    await queue.close();
    redis.disconnect();
    await svc.stop();
    rx.stop();
    await db.close();
  }
}
