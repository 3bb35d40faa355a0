import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort, runScript, dropRedisPrefix } from '../helpers/process.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

// A PRIVATE Postgres cluster (initdb into a temp dir, its own port) is restarted and stopped under
// load; the shared one on 5432 is never touched. Web and worker run as separate processes.

const exec = promisify(execFile);

function pgBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(a) - Number(b));
  const pick = versions.includes('15') ? '15' : versions.at(-1);
  return pick && join(base, pick, 'bin');
}

const bin = pgBinDir();
if (!bin && process.env.CI === 'true') {
  throw new Error('test/ops/postgres-restart.test.ts needs the PostgreSQL server binaries (/usr/lib/postgresql/<version>/bin): apt-get install postgresql');
}

const asRoot = process.getuid?.() === 0;
/** initdb and pg_ctl refuse to run as root: as root they run as the postgres user. */
const pg = (tool: string, args: string[]) =>
  asRoot ? exec('runuser', ['-u', 'postgres', '--', join(bin!, tool), ...args]) : exec(join(bin!, tool), args);

const prefix = `t_pgrestart_${randomBytes(4).toString('hex')}`;
let dir = '';
const data = () => join(dir, 'data');
let port = 0;
let started = false;
const pgOpts = () => ['-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=60`];
const startPg = () => pg('pg_ctl', ['-D', data(), '-l', join(dir, 'log'), '-w', '-t', '20', ...pgOpts(), 'start']);
const children: Array<ReturnType<typeof runScript>> = [];
let receiver: Receiver | undefined;

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
  await receiver?.close();
  if (started) await pg('pg_ctl', ['-D', data(), '-m', 'immediate', '-w', 'stop']).catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
  await dropRedisPrefix(prefix);
});

interface Call {
  op: 'customer' | 'session' | 'expire';
  path: string;
  sent: unknown;
  key?: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  body: { id?: string; error?: { type: string; code: string } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!bin)('a Postgres restart under load', () => {
  it('when Postgres restarts and then stops for 4 s under load, then both processes live, outage calls are quick 503s with Retry-After, and every acknowledged write and every event survives', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pgrestart-'));
    if (asRoot) {
      const id = async (flag: string) => Number((await exec('id', [flag, 'postgres'])).stdout.trim());
      chownSync(dir, await id('-u'), await id('-g'));
    }
    port = await freePort();
    await pg('initdb', ['-D', data(), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await startPg();
    started = true;

    receiver = await startReceiver();
    const webPort = await freePort();
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/payments`,
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: prefix,
      PORT: String(webPort),
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
      WEBHOOK_BACKOFF_BASE_MS: '200',
      RECONCILE_INTERVAL_MS: '2000',
    };
    expect((await runScript('scripts/migrate.ts', [], env).done).code).toBe(0);
    const key = await runScript('scripts/create-key.ts', ['--mode', 'test'], env).done;
    expect(key.code).toBe(0);
    const headers = { authorization: `Bearer ${key.stdout.trim()}`, 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${webPort}`;

    const web = runScript('src/web.ts', [], env);
    const worker = runScript('src/worker.ts', [], env);
    children.push(web, worker);
    for (let i = 0; i < 100 && (await fetch(`${base}/readyz`).then((r) => r.status, () => 0)) !== 200; i++) await sleep(100);
    const endpoint = await fetch(`${base}/v1/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${receiver.url}/hook`, enabled_events: ['*'] }),
    });
    expect(endpoint.status).toBe(200);

    const calls: Call[] = [];
    const call = async (op: Call['op'], path: string, body: unknown, key?: string): Promise<Call> => {
      const t0 = Date.now();
      const h = key ? { ...headers, 'idempotency-key': key } : headers;
      // Far above the 2 s asserted below: a hang shows as a slow answer (or status 0), not a stuck test.
      const r = await fetch(`${base}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body), signal: AbortSignal.timeout(8000) }).catch(() => null);
      const c: Call = {
        op,
        path,
        sent: body,
        key,
        status: r?.status ?? 0,
        ms: Date.now() - t0,
        retryAfter: r?.headers.get('retry-after') ?? null,
        body: r ? ((await r.json().catch(() => ({}))) as Call['body']) : {},
      };
      calls.push(c);
      return c;
    };
    let loading = true;
    const client = async (n: number) => {
      for (let i = 0; loading; i++) {
        await call('customer', '/v1/customers', { email: `c${n}-${i}@example.com` }, `k-${n}-${i}`);
        const s = await call('session', '/v1/checkout/sessions', { amount: 1000 + i, currency: 'usd', success_url: 'https://example.com/ok' });
        if (s.status === 200 && s.body.id) await call('expire', `/v1/checkout/sessions/${s.body.id}/expire`, {});
        await sleep(20);
      }
    };
    const readyz: Array<{ at: number; status: number }> = [];
    const probe = async () => {
      while (loading) {
        readyz.push({ at: Date.now(), status: await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) }).then((r) => r.status, () => 0) });
        await sleep(200);
      }
    };
    const load = Array.from({ length: 8 }, (_, n) => client(n)).concat(probe());

    await sleep(1500);
    await pg('pg_ctl', ['-D', data(), '-l', join(dir, 'log'), '-m', 'fast', '-w', '-t', '20', ...pgOpts(), 'restart']);
    await sleep(2500);
    await pg('pg_ctl', ['-D', data(), '-m', 'fast', '-w', 'stop']);
    const downAt = Date.now();
    await sleep(1000);
    // A hosted page while Postgres is down: a readable 503 page, not a hang or a 500.
    const session = calls.find((c) => c.op === 'session' && c.status === 200)!.body.id!;
    const t0 = Date.now();
    const page = await fetch(`${base}/checkout/${session}`, { signal: AbortSignal.timeout(5000) });
    const pageMs = Date.now() - t0;
    const pageHtml = await page.text();
    await sleep(downAt + 4000 - Date.now());
    await startPg();
    const upAt = Date.now();
    await sleep(2500);
    loading = false;
    await Promise.all(load);

    // Both processes are still running.
    expect(web.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    expect(worker.out() + web.out()).not.toMatch(/uncaught|unhandled error/i);

    // Every call was answered within 2 s; every 5xx is a 503 api_error with Retry-After.
    expect(calls.filter((c) => c.status === 0 || c.ms >= 2000)).toEqual([]);
    const failed = calls.filter((c) => c.status >= 500);
    expect(failed.length).toBeGreaterThan(0); // the outage was seen
    for (const c of failed) {
      expect(c).toMatchObject({ status: 503, retryAfter: '2', body: { error: { type: 'api_error', code: 'service_unavailable' } } });
    }
    expect(calls.filter((c) => c.status !== 200 && c.status < 500)).toEqual([]);
    expect({ status: page.status, retryAfter: page.headers.get('retry-after'), type: page.headers.get('content-type') }).toEqual({ status: 503, retryAfter: '2', type: 'text/html; charset=utf-8' });
    expect(pageHtml).toContain('Temporarily unavailable');
    expect(pageMs).toBeLessThan(2000);
    // /readyz said 503 while Postgres was stopped, and says 200 again afterwards.
    expect(readyz.some((r) => r.at > downAt + 500 && r.at < upAt && r.status === 503)).toBe(true);
    let ready = 0;
    for (let i = 0; i < 50 && ready !== 200; i++) {
      ready = await fetch(`${base}/readyz`).then((r) => r.status, () => 0);
      if (ready !== 200) await sleep(100);
    }
    expect(ready).toBe(200);

    // Every acknowledged write is in the database.
    const sql = postgres(env.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      const ok = (op: Call['op']) => calls.filter((c) => c.op === op && c.status === 200).map((c) => c.body.id!);
      const customers = await sql<{ id: string }[]>`select id from customers where id in ${sql(ok('customer'))}`;
      expect(customers.length).toBe(ok('customer').length);
      const sessions = await sql<{ id: string }[]>`select id from checkout_sessions where id in ${sql(ok('session'))}`;
      expect(sessions.length).toBe(ok('session').length);
      const expired = await sql<{ id: string }[]>`select id from checkout_sessions where status = 'EXPIRED' and id in ${sql(ok('expire'))}`;
      expect(expired.length).toBe(ok('expire').length);
      expect(ok('expire').length).toBeGreaterThan(20);

      // A keyed call that answered 503 can be retried with its key: it runs (200, once), or, when the
      // outage kept the key from being freed, it is still held (409) until the 60 s stale-lock rule.
      for (const c of calls.filter((x) => x.op === 'customer' && x.status === 503)) {
        const retry = await fetch(`${base}${c.path}`, { method: 'POST', headers: { ...headers, 'idempotency-key': c.key! }, body: JSON.stringify(c.sent) });
        expect([200, 409]).toContain(retry.status);
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from customers where email = ${(c.sent as { email: string }).email}`;
        expect(row!.n).toBe(retry.status === 200 ? 1 : 0);
      }

      // Every event recorded is delivered to the receiver (retried by BullMQ or by the reconciler).
      const events = (await sql<{ id: string }[]>`select id from events`).map((e) => e.id);
      expect(events.length).toBeGreaterThanOrEqual(ok('expire').length);
      const delivered = () => new Set(receiver!.received.map((r) => (JSON.parse(r.body) as { id: string }).id));
      for (let i = 0; i < 150 && events.some((id) => !delivered().has(id)); i++) await sleep(100);
      expect(events.filter((id) => !delivered().has(id))).toEqual([]);
    } finally {
      await sql.end();
    }
    expect(web.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
  }, 60_000);
});

describe('Postgres missing at start-up', () => {
  it('when Postgres does not answer, then the web and the worker process each exit 1 with one clear line', async () => {
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/payments`,
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: prefix,
      PORT: String(await freePort()),
    };
    for (const script of ['src/web.ts', 'src/worker.ts']) {
      const exit = await runScript(script, [], env).done;
      expect(exit.code).toBe(1);
      expect(exit.stderr).toMatch(/^error: PostgreSQL is not reachable at 127\.0\.0\.1:\d+ \(ECONNREFUSED\): [^\n]+\n$/);
    }
  });
});
