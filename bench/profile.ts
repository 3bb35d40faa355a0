// Where the service's CPU goes per hot endpoint (issue 28, point 2): for each endpoint, a fresh
// service process under `node --cpu-prof`, loaded alone at 50 connections for BENCH_SECONDS, then
// its profile summarised by self time: per package (express, pino, zod, postgres, …, the
// service's own src/, Node's internals) and the heaviest functions. Written into bench/RESULTS.md;
// the .cpuprofile files stay in bench/out/profile/ (open them in Chrome's DevTools).
// `npm run bench -- profile`; BENCH_PROFILE_CUSTOMERS seeded (default 20,000); BENCH_PROFILE_ONLY=<regex> profiles
// only the endpoints whose name matches and prints their tables instead; BENCH_PROFILE_FLOOR=express or
// http profiles that floor (bench/floors.ts) on the same endpoints instead of the service.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { newId } from '../src/lib/ids.ts';
import { startFloor } from './floors.ts';
import { api, createAccountKey, environmentNote, fmtNum, freshDatabase, load, OUT_DIR, say, startService, table, writeSection, type BenchSettings, type LoadSpec } from './lib.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  /** µs on the monotonic clock, as process.hrtime's (V8's TimeTicks and libuv's both read CLOCK_MONOTONIC). */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Which package or part of the code a frame belongs to. */
function bucket(url: string, fn: string): string {
  if (!url) return fn === '(garbage collector)' ? 'garbage collector' : fn === '(program)' || fn === '(idle)' ? fn : 'native / V8';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const own = /\/(src|workers)\/([^/]+)/.exec(url);
  if (own) return `service ${own[1]}/${own[2]!.replace(/\.ts$/, '')}`;
  return 'other';
}

/** Now on the monotonic clock, in µs (the clock of a CPU profile's timestamps). */
const monoUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time per bucket and per function, in µs per request, of the samples taken while the
 * measured load ran: those stamped within [window.from, window.to] (µs, monotonic clock), so that
 * start-up, warm-up and shutdown are left out whatever they cost.
 */
function summarise(file: string, requests: number, window: { from: number; to: number }) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = p.startTime;
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i] ?? 0;
    if (at < window.from || at > window.to) return;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const buckets = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName: fn, url, lineNumber } = n.callFrame;
    if (fn === '(idle)' || fn === '(program)') continue;
    busy += us;
    const b = bucket(url, fn);
    buckets.set(b, (buckets.get(b) ?? 0) + us);
    const label = `${fn || '(anonymous)'} ${url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|workers)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    fns.set(label, (fns.get(label) ?? 0) + us);
  }
  const per = (us: number) => us / requests;
  const top = (m: Map<string, number>, k: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, us]) => ({ name, us: per(us) }));
  return { busyUs: per(busy), buckets: top(buckets, 12), functions: top(fns, 12) };
}

const PROFILE_LINK = { amount: 2500, currency: 'usd', name: 'Profile', slug: 'profile-page' };

export async function run(settings: BenchSettings): Promise<void> {
  const customers = Number(process.env.BENCH_PROFILE_CUSTOMERS ?? 20_000);
  const db = await freshDatabase('profile');
  const env = await environmentNote(db.sql);
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  const ids = Array.from({ length: customers }, () => newId('cus'));
  await db.sql`
    insert into customers (id, account_id, livemode, email, first_name, last_name, processor_customer_id)
    select id, ${accountId}, false, id || '@example.com', 'Seeded', 'Customer', 'pcus_seeded_' || id from unnest(${ids}::text[]) as t(id)`;
  const dir = path.join(OUT_DIR, 'profile');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const sessionBody = { currency: 'usd', success_url: 'https://merchant.example/thanks', line_items: [{ name: 'Teapot', quantity: 1, amount: 3200 }] };
  const endpoints: Array<{ name: string; spec: Omit<LoadSpec, 'url'> }> = [
    { name: '`GET /v1/customers/:id`', spec: { key, path: `/v1/customers/${ids[0]}`, next: () => ({ path: `/v1/customers/${ids[Math.floor(Math.random() * ids.length)]}` }) } },
    { name: '`GET /v1/customers` (first page)', spec: { key, path: '/v1/customers' } },
    { name: '`GET /l/:slug`', spec: { path: '/l/profile-page' } },
    { name: '`POST /v1/customers`', spec: { key, method: 'POST', path: '/v1/customers', body: '{"email":"p-[<id>]@example.com","first_name":"New","last_name":"Customer"}', idReplacement: true } },
    { name: '`POST /v1/checkout/sessions`', spec: { key, method: 'POST', path: '/v1/checkout/sessions', body: sessionBody } },
  ];
  // BENCH_PROFILE_ONLY=<regex>: only the endpoints whose name matches, printed (bench/RESULTS.md left alone).
  const only = process.env.BENCH_PROFILE_ONLY ? new RegExp(process.env.BENCH_PROFILE_ONLY) : null;
  // BENCH_PROFILE_FLOOR=express|http: the same endpoints on that floor (bench/floors.ts) instead of the service, printed.
  const floor = process.env.BENCH_PROFILE_FLOOR as 'express' | 'http' | undefined;
  if (floor && floor !== 'express' && floor !== 'http') throw new Error('BENCH_PROFILE_FLOOR: express or http');
  const sections: string[] = [];
  let linkMade = false;
  /** Makes the profiled link once, through the service at `url`. */
  const ensureLink = async (url: string) => {
    if (linkMade) return;
    await api(url, key, 'POST', '/v1/payment-links', PROFILE_LINK);
    linkMade = true;
  };
  /** Makes the profiled link on a service of its own and writes its page to `file`. */
  const captureLinkPage = async (databaseUrl: string, file: string): Promise<string> => {
    const svc = await startService({ suite: 'profile', databaseUrl });
    try {
      await ensureLink(svc.url);
      writeFileSync(file, await (await fetch(`${svc.url}/l/profile-page`)).text());
      return file;
    } finally {
      await svc.stop();
    }
  };
  try {
    for (const [i, e] of endpoints.entries()) {
      if (only && !only.test(e.name)) continue;
      const out = path.join(dir, String(i));
      mkdirSync(out);
      say(`profile: ${e.name}${floor ? ` on the ${floor} floor` : ''}`);
      const prof = ['--cpu-prof', `--cpu-prof-dir=${out}`];
      // The floor's sessions carry a checkout URL as long as the service's (http://localhost:<port>/checkout).
      // A floor serves the link page the service rendered (as in bench/floors.ts): captured first.
      const page = floor && e.name.includes('/l/') ? await captureLinkPage(db.url, path.join(out, 'link-page.html')) : '';
      const svc = floor ? await startFloor(floor, db.url, 'http://localhost:40000/checkout', page, prof) : await startService({ suite: 'profile', databaseUrl: db.url, nodeArgs: prof });
      let requests = 0;
      let t0 = 0;
      let t1 = 0;
      try {
        if (!floor) await ensureLink(svc.url);
        await load({ url: svc.url, ...e.spec, warmupSeconds: 0 }, { ...settings, seconds: 2 }); // warm-up, not profiled
        t0 = monoUs();
        const r = await load({ url: svc.url, ...e.spec, warmupSeconds: 0 }, settings);
        t1 = monoUs();
        requests = r.total;
      } finally {
        await svc.stop();
      }
      const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
      if (!file || requests === 0) {
        sections.push(`#### ${e.name}\n\nNo profile written.`);
        continue;
      }
      const s = summarise(path.join(out, file), requests, { from: t0, to: t1 });
      sections.push(
        `#### ${e.name}: ${fmtNum(s.busyUs)} µs of CPU (main thread, self time) per request, ${fmtNum(requests)} requests\n\n` +
          table(['Package or part (self time)', 'µs/req'], s.buckets.map((b) => [b.name, b.us.toFixed(1)])) +
          '\n\n' +
          table(['Heaviest functions (self time)', 'µs/req'], s.functions.map((f) => [`\`${f.name.replace(/\|/g, '\\|')}\``, f.us.toFixed(1)])),
      );
    }
    if (only || floor) {
      console.log(sections.join('\n\n'));
      return;
    }
    await writeSection(
      'profile',
      `## Where the CPU goes per endpoint (issue 28)

${env}.
Each endpoint alone on a fresh \`node --cpu-prof src/main.ts\` (web and workers, default configuration,
LOG_LEVEL info) for ${settings.seconds} s at ${settings.connections} connections after 2 s of warm-up; only the samples of the
measured seconds are counted (start-up, warm-up and shutdown left out: the samples are picked by their time stamps,
on the same monotonic clock as the load's start and end; seeded customers have their processor twins, so no
backlog is swept meanwhile). Self time of the main thread per request, by package and by
function; the profiler adds some overhead of its own, so compare within a table, not with other
sections. Reproduce: \`BENCH_SECONDS=${settings.seconds} npm run bench -- profile\` (profiles in bench/out/profile/).

${sections.join('\n\n')}`,
    );
  } finally {
    await db.close();
  }
}
