// The service's hot endpoints beside their floors (issue 28, point 1): a bare Express 5 +
// postgres.js server and a bare node:http + postgres.js server (bench/support/floor-server.ts)
// that run the same SQL, with the same pool size, and answer the same bytes (checked here before
// measuring). Interleaved: every round measures each endpoint on the service, then on each floor,
// in a rotating order; the service is paused (SIGSTOP) while a floor runs, so its background work
// (job schedules, sweeps) takes nothing from the floors. Rates are pooled over the rounds; CPU per
// request is read from /proc for the server process, its Postgres backends and the Redis server.
// Sizes: BENCH_SECONDS per measurement (default 10), BENCH_FLOOR_ROUNDS (default 3),
// BENCH_FLOOR_CUSTOMERS seeded (default 200,000). About 15 × rounds × (BENCH_SECONDS + 1) s.
// A/B in the same run (issue 28, points 2 and 6), each one more server in every round:
//   BENCH_FLOOR_BASELINE_DIR=<a checkout of another version, with node_modules>: "baseline"
//     (named in the results by BENCH_FLOOR_BASELINE_NAME, default the folder's name); several
//     checkouts separated by commas (names likewise) measure each step of a series in the same rounds;
//   BENCH_FLOOR_BASELINE_OWN_DB=1: each baseline on a database of its own, migrated by its own
//     migrations and seeded with the same rows (a schema change is then measured too; the floors
//     and the service share the service's database);
//   BENCH_FLOOR_VARIANT_ENV="K=V …": this service again with those variables, "variant";
//   BENCH_FLOOR_ONLY=<regex>: only the endpoints whose name matches (printed, not written to bench/RESULTS.md).
// Only the server being measured runs; the other services are paused.
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../src/ops/pidfiles.ts';
import { newId } from '../src/lib/ids.ts';
import {
  api,
  createAccountKey,
  dropBenchDatabase,
  environmentNote,
  fmtNum,
  fmtRatio,
  freshDatabase,
  load,
  OUT_DIR,
  processCpuSeconds,
  REDIS_URL,
  ROOT,
  say,
  serviceEnvNote,
  sleep,
  startService,
  table,
  writeSection,
  type BenchDb,
  type BenchSettings,
  type LoadSpec,
} from './lib.ts';

/** `service`, the two floors, `baseline`, `baseline2`, … (BENCH_FLOOR_BASELINE_DIR) and `variant`. */
type Target = string;
const isService = (t: Target) => t === 'service' || t === 'variant' || t.startsWith('baseline');

interface Endpoint {
  name: string;
  create: boolean;
  spec: (url: string) => Omit<LoadSpec, 'url'>;
  /** Method and path of one request, to compare the answers. */
  probe: { method: string; path: string; body?: unknown };
}

interface Tally {
  requests: number;
  seconds: number;
  cpu: number;
  pg: number;
  redis: number;
  non2xx: number;
}

interface Floor {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A floor server; `execArgv` adds Node options (bench/profile.ts: --cpu-prof). */
export async function startFloor(kind: 'express' | 'http', databaseUrl: string, checkoutUrl: string, linkPage: string, execArgv: string[] = []): Promise<Floor> {
  const port = await freePort();
  const child: ChildProcess = fork(path.join(ROOT, 'bench/support/floor-server.ts'), [], {
    cwd: ROOT,
    execArgv: [...process.execArgv, ...execArgv],
    env: { ...process.env, FLOOR_KIND: kind, PORT: String(port), DATABASE_URL: databaseUrl, FLOOR_CHECKOUT_URL: checkoutUrl, FLOOR_LINK_PAGE: linkPage, FLOOR_POOL_MAX: '10' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`floor ${kind} exited (${code}) before it was ready`)));
  });
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exit;
    },
  };
}

/** A process and all its descendants (Linux /proc). */
function withDescendants(pid: number): number[] {
  const out = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const kid of kids ? kids.split(' ') : []) out.push(...withDescendants(Number(kid)));
    }
  } catch {
    // gone meanwhile
  }
  return out;
}

/** The answer's bytes with what differs from call to call (ids, the twins made from them, times, CSRF tokens) blanked. */
function normalise(body: string): string {
  return body
    .replace(/\b(cus|cs)_[0-9a-z]{26,29}\b/g, '$1_ID')
    .replace(/\bpcus_sim_[0-9a-f]{24}\b/g, 'pcus_sim_ID')
    .replace(/"(created|updated|expires_at)":\d+/g, '"$1":0')
    .replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf" value="TOKEN"');
}

async function answer(url: string, key: string, p: Endpoint['probe']): Promise<string> {
  const res = await fetch(url + p.path, {
    method: p.method,
    headers: { authorization: `Bearer ${key}`, ...(p.body ? { 'content-type': 'application/json' } : {}) },
    body: p.body ? JSON.stringify(p.body) : undefined,
  });
  return normalise(await res.text());
}

export async function run(settings: BenchSettings): Promise<void> {
  const rounds = Number(process.env.BENCH_FLOOR_ROUNDS ?? 3);
  const customers = Number((process.env.BENCH_FLOOR_CUSTOMERS ?? '200000').replace(/[_,]/g, ''));
  const db = await freshDatabase('floors');
  const env = await environmentNote(db.sql);
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  say(`floors: seeding ${fmtNum(customers)} customers`);
  const sample: string[] = [];
  const chunks: string[][] = [];
  for (let i = 0; i < customers; i += 20_000) {
    const ids = Array.from({ length: Math.min(20_000, customers - i) }, () => newId('cus'));
    if (sample.length < 1000) sample.push(...ids.slice(0, 1000 - sample.length));
    chunks.push(ids);
  }
  const seed = async (into: BenchDb) => {
    for (const ids of chunks) {
      await into.sql`
        insert into customers (id, account_id, livemode, email, first_name, last_name, processor_customer_id)
        select id, ${accountId}, false, id || '@example.com', 'Seeded', 'Customer', 'pcus_seeded_' || id from unnest(${ids}::text[]) as t(id)`;
    }
    await into.sql`analyze customers`;
  };
  await seed(db);

  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
  const svc = await startService({ suite: 'floors', databaseUrl: db.url });
  const baselineDirs = (process.env.BENCH_FLOOR_BASELINE_DIR ?? '').split(',').filter(Boolean);
  const baselineNames = (process.env.BENCH_FLOOR_BASELINE_NAME ?? '').split(',');
  const baselines = baselineDirs.map((dir, i) => ({ target: i === 0 ? 'baseline' : `baseline${i + 1}`, dir, name: baselineNames[i] || path.basename(dir) }));
  const variantEnv = process.env.BENCH_FLOOR_VARIANT_ENV ?? '';
  const extra: Partial<Record<Target, Awaited<ReturnType<typeof startService>>>> = {};
  // A baseline on a database of its own: the same account, key and customers, its own migrations.
  const ownDbs: Partial<Record<Target, BenchDb>> = {};
  if (process.env.BENCH_FLOOR_BASELINE_OWN_DB === '1') {
    const [k] = await db.sql<{ id: string; key_hash: Buffer; last4: string }[]>`select id, key_hash, last4 from api_keys where account_id = ${accountId}`;
    for (const b of baselines) {
      const own = await freshDatabase(`floors_${b.target}`, path.join(b.dir, 'migrations'));
      await own.sql`insert into accounts (id) values (${accountId})`;
      await own.sql`insert into api_keys (id, account_id, livemode, key_hash, last4) values (${k!.id}, ${accountId}, false, ${k!.key_hash}, ${k!.last4})`;
      await seed(own);
      ownDbs[b.target] = own;
    }
  }
  const dbOf = (t: Target) => ownDbs[t] ?? db;
  for (const b of baselines) extra[b.target] = await startService({ suite: 'floors', instance: b.target, databaseUrl: dbOf(b.target).url, cwd: b.dir });
  if (variantEnv) {
    const env = Object.fromEntries(variantEnv.split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    extra.variant = await startService({ suite: 'floors', instance: 'variant', databaseUrl: db.url, env });
  }
  const floors: Partial<Record<Target, Floor>> = {};
  try {
    await api(svc.url, key, 'POST', '/v1/payment-links', { amount: 2500, currency: 'usd', name: 'Floor', slug: 'floor-page' });
    for (const t of Object.keys(ownDbs)) await api(extra[t]!.url, key, 'POST', '/v1/payment-links', { amount: 2500, currency: 'usd', name: 'Floor', slug: 'floor-page' });
    const linkPageFile = path.join(OUT_DIR, 'floors-link-page.html');
    writeFileSync(linkPageFile, await (await fetch(`${svc.url}/l/floor-page`)).text());
    const checkoutUrl = `http://localhost:${svc.port}/checkout`;
    floors.express = await startFloor('express', db.url, checkoutUrl, linkPageFile);
    floors.http = await startFloor('http', db.url, checkoutUrl, linkPageFile);
    const urls: Partial<Record<Target, string>> = { service: svc.url, express: floors.express.url, http: floors.http.url };
    const pids: Partial<Record<Target, number>> = { service: svc.pid, express: floors.express.pid, http: floors.http.pid };
    for (const [t, x] of Object.entries(extra)) {
      urls[t] = x!.url;
      pids[t] = x!.pid;
    }
    const TARGETS = ['service', 'express', 'http', ...baselines.map((b) => b.target), 'variant'].filter((t) => urls[t]);
    const servicePids = TARGETS.filter(isService).flatMap((t) => (pids[t] ? [[t, pids[t]] as const] : []));

    const sessionBody = { currency: 'usd', success_url: 'https://merchant.example/thanks', line_items: [{ name: 'Teapot', quantity: 1, amount: 3200 }] };
    const pick = () => sample[Math.floor(Math.random() * sample.length)]!;
    const all: Endpoint[] = [
      {
        name: '`GET /v1/customers/:id`',
        create: false,
        spec: () => ({ key, path: `/v1/customers/${sample[0]}`, next: () => ({ path: `/v1/customers/${pick()}` }) }),
        probe: { method: 'GET', path: `/v1/customers/${sample[0]}` },
      },
      {
        name: '`GET /v1/customers` (first page of 10)',
        create: false,
        spec: () => ({ key, path: '/v1/customers' }),
        probe: { method: 'GET', path: '/v1/customers' },
      },
      {
        name: '`GET /l/:slug` (hosted link page)',
        create: false,
        spec: () => ({ path: '/l/floor-page' }),
        probe: { method: 'GET', path: '/l/floor-page' },
      },
      {
        name: '`POST /v1/customers`',
        create: true,
        spec: () => ({ key, method: 'POST', path: '/v1/customers', body: '{"email":"floor-[<id>]@example.com","first_name":"New","last_name":"Customer"}', idReplacement: true }),
        probe: { method: 'POST', path: '/v1/customers', body: { email: 'probe@example.com', first_name: 'New', last_name: 'Customer' } },
      },
      {
        name: '`POST /v1/checkout/sessions`',
        create: true,
        spec: () => ({ key, method: 'POST', path: '/v1/checkout/sessions', body: sessionBody }),
        probe: { method: 'POST', path: '/v1/checkout/sessions', body: sessionBody },
      },
    ];
    // BENCH_FLOOR_ONLY=<regex>: only the endpoints whose name matches (a focused A/B); bench/RESULTS.md is then left alone.
    const only = process.env.BENCH_FLOOR_ONLY ? new RegExp(process.env.BENCH_FLOOR_ONLY) : null;
    const endpoints = only ? all.filter((e) => only.test(e.name)) : all;

    // Same bytes: each floor's answer against the service's (ids, times and CSRF tokens blanked).
    const identical = new Map<string, boolean>();
    for (const e of endpoints) {
      const want = await answer(svc.url, key, e.probe);
      const got = [await answer(urls.express!, key, e.probe), await answer(urls.http!, key, e.probe)];
      const same = got.every((g) => g === want);
      identical.set(e.name, same);
      if (!same) {
        say(`floors: ${e.name}: a floor's answer differs from the service's (bench/out/floors-differs-*.txt)`);
        writeFileSync(path.join(OUT_DIR, 'floors-differs-service.txt'), want);
        writeFileSync(path.join(OUT_DIR, 'floors-differs-floors.txt'), got.join('\n'));
      }
    }

    // Every customer gets its processor twin from the services' sweep (src/processor/customers.ts),
    // whoever made it: the customers a floor or another service made would otherwise be swept in
    // the next measured service's window and counted as its work. Before each measurement every
    // service runs until no customer lacks its twin (the seeded ones have theirs, as in a deployment
    // at rest); a service's own creates are swept in its own window, a second behind.
    const settle = async () => {
      const until = Date.now() + 30_000;
      for (;;) {
        let n = 0;
        for (const d of [db, ...Object.values(ownDbs)]) n += (await d!.sql<{ n: number }[]>`select count(*)::int as n from customers where processor_customer_id is null`)[0]!.n;
        const row = { n };
        if (row.n === 0) return;
        if (Date.now() > until) return say(`floors: ${row.n} customers still without their processor twin after 30 s`);
        await sleep(100);
      }
    };

    const tallies = new Map<string, Tally>();
    for (let r = 0; r < rounds; r++) {
      for (const e of endpoints) {
        // Rotate which server goes first, so none always follows the same one.
        const order = TARGETS.map((_, i) => TARGETS[(i + r) % TARGETS.length]!);
        for (const t of order) {
          await settle();
          say(`floors: round ${r + 1}/${rounds}: ${e.name} on ${t}`);
          // A service with WEB_CONCURRENCY > 1 answers from forks: they are paused with it.
          const paused = servicePids.filter(([other]) => other !== t).flatMap(([, pid]) => withDescendants(pid));
          for (const pid of paused) process.kill(pid, 'SIGSTOP');
          try {
            const spec: LoadSpec = { url: urls[t]!, ...e.spec(urls[t]!), warmupSeconds: r === 0 ? 2 : 1, service: { cpuSeconds: () => processCpuSeconds(pids[t]!) }, db: dbOf(t) };
            // The warm-up runs inside load(); Redis CPU is read around the whole call and scaled to the measured part.
            const redis0 = processCpuSeconds(redisPid);
            const t0 = performance.now();
            const res = await load(spec, settings);
            const wall = (performance.now() - t0) / 1000;
            const redisUsed = (processCpuSeconds(redisPid) - redis0) * (settings.seconds / wall);
            const k = `${e.name}|${t}`;
            const acc = tallies.get(k) ?? { requests: 0, seconds: 0, cpu: 0, pg: 0, redis: 0, non2xx: 0 };
            acc.requests += res.total;
            acc.seconds += settings.seconds;
            acc.cpu += ((res.serviceCpuUs ?? 0) * res.total) / 1e6;
            acc.pg += ((res.pgCpuUs ?? 0) * res.total) / 1e6;
            acc.redis += redisUsed;
            acc.non2xx += res.non2xx + res.errors;
            tallies.set(k, acc);
            say(`floors:   ${fmtNum(res.total / settings.seconds)}/s, ${fmtNum(res.serviceCpuUs ?? 0)} µs/req server, ${fmtNum(res.pgCpuUs ?? 0)} µs/req Postgres`);
          } finally {
            for (const pid of paused) process.kill(pid, 'SIGCONT');
          }
        }
      }
    }

    const rate = (e: Endpoint, t: Target) => {
      const a = tallies.get(`${e.name}|${t}`)!;
      return a.requests / a.seconds;
    };
    const us = (e: Endpoint, t: Target, f: 'cpu' | 'pg' | 'redis') => {
      const a = tallies.get(`${e.name}|${t}`)!;
      return fmtNum((a[f] * 1e6) / a.requests);
    };
    const errors = (e: Endpoint) => TARGETS.map((t) => tallies.get(`${e.name}|${t}`)!.non2xx).reduce((x, y) => x + y, 0);
    const rows = endpoints.map((e) => {
      const [svcRate, exRate, httpRate] = (['service', 'express', 'http'] as Target[]).map((t) => rate(e, t)) as [number, number, number];
      const vsExpress = svcRate / exRate;
      const vsHttp = svcRate / httpRate;
      const met = vsExpress >= 0.9 && (!e.create || vsHttp >= 0.8);
      return [
        e.name,
        fmtNum(svcRate),
        fmtNum(exRate),
        fmtNum(httpRate),
        fmtRatio(svcRate, exRate),
        fmtRatio(svcRate, httpRate),
        `${us(e, 'service', 'cpu')} / ${us(e, 'express', 'cpu')} / ${us(e, 'http', 'cpu')}`,
        `${us(e, 'service', 'pg')} / ${us(e, 'express', 'pg')} / ${us(e, 'http', 'pg')}`,
        `${us(e, 'service', 'redis')} / ${us(e, 'express', 'redis')} / ${us(e, 'http', 'redis')}`,
        identical.get(e.name) ? 'yes' : '**no**',
        `${met ? 'met' : '**missed**'}${errors(e) ? ` (${errors(e)} non-2xx)` : ''}`,
      ];
    });
    for (const r of rows) say(`floors: ${r[0]}: service ${r[1]}/s, express ${r[2]}/s, http ${r[3]}/s (${r[4]}, ${r[5]})`);
    // The A/B rows: each extra service beside this one, both as ratios to the floors of the same rounds.
    const abTargets = TARGETS.filter((t) => isService(t) && t !== 'service');
    const abNames: Record<string, string> = { variant: `this service with ${variantEnv}` };
    for (const b of baselines) abNames[b.target] = `${b.target} (${b.name})`;
    const abRows = endpoints.flatMap((e) =>
      (['service', ...abTargets] as Target[]).map((t) => [
        e.name,
        t === 'service' ? 'this service' : abNames[t]!,
        fmtNum(rate(e, t)),
        fmtRatio(rate(e, t), rate(e, 'express')),
        fmtRatio(rate(e, t), rate(e, 'http')),
        us(e, t, 'cpu'),
        us(e, t, 'pg'),
        us(e, t, 'redis'),
      ]),
    );
    for (const r of abTargets.length ? abRows : []) say(`floors: A/B ${r[0]} ${r[1]}: ${r[2]}/s (${r[3]} × Express), ${r[5]} µs/req`);
    const note = serviceEnvNote();
    if (only) return;
    await writeSection(
      'floors',
      `## The hot path against its floors (issue 28)

${env}.
The service is \`node src/main.ts\` (web and workers in one process, default configuration, LOG_LEVEL
info)${note ? `; ${note}` : ''}. The floors (bench/support/floor-server.ts) are a bare Express 5 server and a bare
\`node:http\` server with postgres.js, the same pool size (10), the same SQL per request, the key
looked up in memory, and the same answer bytes (checked before measuring: "Same bytes"), and none
of the service's other features. ${fmtNum(customers)} customers seeded. ${rounds} rounds × ${settings.seconds} s per server and endpoint at
${settings.connections} connections, interleaved (the order of the servers rotates each round), rates pooled
over the rounds; the service was paused (SIGSTOP) while a floor ran. Before each measurement every service ran until no
customer lacked its processor twin (the seeded ones have theirs), so no one sweeps another's creates in its window${Object.keys(ownDbs).length ? `;
each baseline ran on a database of its own, migrated by its own migrations and seeded with the same rows` : ''}.

${table(
  ['Request', 'Service req/s', 'Express floor', 'node:http floor', 'Service / Express', 'Service / node:http', 'CPU µs/req, server process (service / Express / node:http)', 'Postgres µs/req', 'Redis µs/req', 'Same bytes', 'Target (≥ 0.9 × Express; creates ≥ 0.8 × node:http)'],
  rows,
)}

${abTargets.length ? `### A/B in the same rounds\n\n${table(['Request', 'Server', 'req/s', '/ Express floor', '/ node:http floor', 'CPU µs/req, server process', 'Postgres µs/req', 'Redis µs/req'], abRows)}\n\n` : ''}CPU per request is the server process's (the service's includes its workers' background work in the
same window: schedules, sweeps), its database's Postgres backends', and the Redis server's (whoever
used it meanwhile). The rates are on 2 cores shared with the load generator, Postgres and Redis.
Reproduce: \`BENCH_SECONDS=${settings.seconds} BENCH_FLOOR_ROUNDS=${rounds} BENCH_FLOOR_CUSTOMERS=${customers} npm run bench -- floors\`${baselines.length ? ' with BENCH_FLOOR_BASELINE_DIR set to the baselines\' checkouts' : ''}.`,
    );
  } finally {
    await floors.express?.stop();
    await floors.http?.stop();
    for (const x of Object.values(extra)) await x!.stop();
    for (const d of Object.values(ownDbs)) {
      await d!.close();
      await dropBenchDatabase(d!.name);
    }
    await svc.stop();
    redis.disconnect();
    await db.close();
  }
}
