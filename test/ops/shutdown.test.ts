import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dbUrl, freePort, root, runScript, dropRedisPrefix } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';

const dbName = `t_stop_${randomBytes(4).toString('hex')}`;
const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
const SHUTDOWN_TIMEOUT_MS = 20_000; // idle connections get min(keep-alive 5 s, 20 s / 4) = 5 s
const children: ChildProcess[] = [];
const servicePids = new Set<number>();
const readLogs: Array<() => unknown> = [];
let secret = '';

const baseEnv = (port: number): NodeJS.ProcessEnv => ({
  // node_modules/.bin first: npm (a `#!/usr/bin/env node` script) and its scripts then run on Node 24.
  PATH: `${root}node_modules/.bin:${process.env.PATH}`,
  HOME: process.env.HOME,
  DATABASE_URL: dbUrl(dbName),
  REDIS_URL: inject('redisUrl'),
  REDIS_PREFIX: dbName,
  LOG_LEVEL: 'info',
  PORT: String(port),
  SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
});

beforeAll(async () => {
  await admin`create database ${admin(dbName)} template ${admin(inject('templateDb'))}`;
  const key = await runScript('scripts/create-key.ts', ['--mode', 'test'], baseEnv(0)).done;
  expect(key.code).toBe(0);
  secret = key.stdout.trim();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // After a failure, npm's child or a cluster fork may outlive what was spawned: end those too.
  for (const read of readLogs) read();
  for (const pid of servicePids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await admin`drop database if exists ${admin(dbName)} with (force)`;
  await admin.end();
  await dropRedisPrefix(dbName);
  await dropRedisPrefix(`${dbName}_late`);
});

/** The command of a Procfile entry. */
function procfile(name: string): string {
  const line = readFileSync(`${root}Procfile`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return line!.slice(name.length + 1).trim();
}

/** A command of the project as a child process, its output collected. */
function start(command: string[], env: NodeJS.ProcessEnv) {
  const [file, ...args] = command;
  const child = spawn(file === 'node' ? process.execPath : file!, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // The service's own lines (npm adds a banner and warnings around them).
  const logs = () => {
    const lines = stdout
      .split('\n')
      .filter((l) => l.startsWith('{') && l.endsWith('}'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of lines) if (typeof l.pid === 'number' && l.pid !== process.pid) servicePids.add(l.pid);
    return lines;
  };
  readLogs.push(logs);
  return { child, done, logs, stderr: () => stderr };
}

/** Resolves with whatever the process did within `ms`: its exit, or null while it still runs. */
const within = <T,>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

/** Up to 60 s: a cluster of two web processes starting on a loaded two-core machine took over 20 s. */
async function waitReady(port: number, child: ChildProcess) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error('the service exited');
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`, { headers: { connection: 'close' } }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the service never became ready');
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One kept-alive client connection, speaking HTTP/1.1 by hand so that nothing reconnects behind our back. */
async function connect(port: number) {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise((r, j) => sock.once('connect', r).once('error', j));
  let buf = '';
  let waiting: (() => void) | null = null;
  sock.on('data', (d) => ((buf += d), waiting?.()));
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.on('error', () => {});
  const read = async (): Promise<RawAnswer> => {
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = buf.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? 0);
        if (buf.length >= end + 4 + length) {
          const body = buf.slice(end + 4, end + 4 + length);
          buf = buf.slice(end + 4 + length);
          return { status: Number(statusLine!.split(' ')[1]), headers, body };
        }
      }
      if (sock.destroyed || sock.readableEnded) throw new Error(`connection closed before an answer (${buf.length} bytes: ${buf.slice(0, 80)})`);
      await Promise.race([new Promise<void>((r) => (waiting = r)), closed]);
    }
  };
  const head = (method: string, path: string, length?: number) =>
    `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\n` +
    (length === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${length}\r\n`) +
    '\r\n';
  return {
    closed,
    isOpen: () => !sock.destroyed && !sock.readableEnded,
    get: (path: string) => (sock.write(head('GET', path)), read()),
    post: (path: string, body: unknown) => {
      const text = JSON.stringify(body);
      sock.write(head('POST', path, Buffer.byteLength(text)) + text);
      return read();
    },
    /** Sends the head and part of the body; `rest()` sends the remainder and reads the answer. */
    postSlowly: (path: string, body: unknown) => {
      const text = JSON.stringify(body);
      sock.write(head('POST', path, Buffer.byteLength(text)) + text.slice(0, 5));
      return { rest: () => (sock.write(text.slice(5)), read()) };
    },
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True once a new connection is refused (bounded: 3 s). */
async function refused(port: number): Promise<boolean> {
  for (let i = 0; i < 30; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(false)));
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (ok) return true;
    await sleep(100);
  }
  return false;
}

describe('SIGTERM with kept-alive clients', () => {
  it.each([
    ['node src/web.ts', ['node', 'src/web.ts'], {}],
    ['node src/main.ts with WEB_CONCURRENCY=2', ['node', 'src/main.ts'], { WEB_CONCURRENCY: '2' }],
    ['npm run start:web', ['npm', 'run', 'start:web'], {}],
    ['npm start', ['npm', 'start'], {}],
    // As a Procfile runner does it (sh -c), with only the system's PATH: the line itself must pick Node 24.
    ['the Procfile web line', ['sh', '-c', procfile('web')], { PATH: '/usr/local/bin:/usr/bin:/bin' }],
  ])(
    'when %s gets SIGTERM, then requests in flight and requests on open connections are answered with Connection: close, idle connections are closed, and it exits 0 within SHUTDOWN_TIMEOUT_MS',
    async (name, command, extra) => {
      const port = await freePort();
      const svc = start(command, { ...baseEnv(port), ...extra });
      await waitReady(port, svc.child);
      // With forks, the port answers once the first listens: wait for every one (a loaded machine starts them seconds apart).
      const forks = 'WEB_CONCURRENCY' in extra ? 2 : 1;
      await eventually(() => Promise.resolve(svc.logs().filter((l) => l.msg === 'listening').length >= forks), 20_000);
      const tag = name.replace(/\W+/g, '-');

      const [early, late, idle, slow] = await Promise.all([connect(port), connect(port), connect(port), connect(port)]);
      for (const c of [early, late, idle, slow]) {
        const r = await c.get('/v1/account');
        expect(r.status).toBe(200);
        expect(r.headers.connection).toBe('keep-alive');
      }
      const inFlight = slow.postSlowly('/v1/customers', { email: `inflight-${tag}@example.com` });
      await sleep(200); // fault drill: the slow request is in flight before the signal

      const signalledAt = Date.now();
      svc.child.kill('SIGTERM');
      await sleep(300); // fault drill: the listener has closed (the timeline of a shutdown)

      // No new connections…
      await expect(refused(port)).resolves.toBe(true);
      // …but a request on a connection opened before the signal is served, and told the connection closes.
      const a = await early.post('/v1/customers', { email: `early-${tag}@example.com` });
      expect(a.status).toBe(200);
      expect(a.headers.connection).toBe('close');
      await within(early.closed, 2000);
      expect(early.isOpen()).toBe(false);

      const b = await inFlight.rest();
      expect(b.status).toBe(200);
      expect(b.headers.connection).toBe('close');

      await sleep(700); // a second after the signal
      const c = await late.get('/v1/account');
      expect(c.status).toBe(200);
      expect(c.headers.connection).toBe('close');

      // The connection that sends nothing is closed by the service, and the process exits 0 in time.
      await within(idle.closed, SHUTDOWN_TIMEOUT_MS);
      expect(idle.isOpen()).toBe(false);
      const exit = await within(svc.done, SHUTDOWN_TIMEOUT_MS - (Date.now() - signalledAt));
      expect(exit, `still running ${SHUTDOWN_TIMEOUT_MS} ms after SIGTERM:\n${svc.stderr()}`).toEqual({ code: 0, signal: null });

      // Every web process it ran is gone (npm left no orphan behind, the cluster no fork).
      const pids = new Set(svc.logs().filter((l) => l.msg === 'listening').map((l) => l.pid as number));
      expect(pids.size).toBe(forks);
      await sleep(100); // fault drill: the kernel reaps the exited forks
      expect([...pids].filter(alive)).toEqual([]);
      expect(svc.logs().some((l) => l.msg === 'shutdown timed out; exiting')).toBe(false);

      const sql = postgres(dbUrl(dbName), { max: 1, onnotice: () => {} });
      try {
        const rows = await sql`select email from customers where email like ${`%-${tag}@example.com`} order by email`;
        expect(rows.map((r) => r.email)).toEqual([`early-${tag}@example.com`, `inflight-${tag}@example.com`]);
      } finally {
        await sql.end();
      }
    },
    60_000,
  );

  it.each([
    ['npm run start:worker', ['npm', 'run', 'start:worker'], {}],
    ['the Procfile worker line', ['sh', '-c', procfile('worker')], { PATH: '/usr/local/bin:/usr/bin:/bin' }],
  ])('when %s gets SIGTERM, then the worker process stops its workers and exits 0, and nothing is left running', async (_name, command, extra) => {
    const svc = start(command, { ...baseEnv(0), ...extra });
    for (let i = 0; i < 200 && !svc.logs().some((l) => l.msg === 'started'); i++) await sleep(100);
    const pid = svc.logs().find((l) => l.msg === 'started')?.pid as number;
    expect(pid).toBeGreaterThan(0);
    if (command[0] === 'sh') expect(pid).toBe(svc.child.pid); // exec: the shell became node
    svc.child.kill('SIGTERM');
    expect(await within(svc.done, SHUTDOWN_TIMEOUT_MS)).toEqual({ code: 0, signal: null });
    expect(svc.logs().some((l) => l.msg === 'stopped' && l.pid === pid)).toBe(true);
    expect(alive(pid)).toBe(false);
  }, 120_000);
});

describe('a port that cannot be taken', () => {
  it.each([
    ['node src/web.ts', ['node', 'src/web.ts'], {}],
    ['node src/main.ts', ['node', 'src/main.ts'], {}],
    ['node src/main.ts with WEB_CONCURRENCY=2', ['node', 'src/main.ts'], { WEB_CONCURRENCY: '2' }],
  ])('when %s finds its port in use, then it exits non-zero with one clear line and never says it listens', async (_name, command, extra) => {
    const holder = net.createServer().listen(0);
    await new Promise((r) => holder.once('listening', r));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const svc = start(command, { ...baseEnv(port), ...extra });
      const exit = await within(svc.done, 45_000);
      expect(exit, 'still running 45 s after start').not.toBeNull();
      expect(exit!.code).not.toBe(0);
      const lines = svc.stderr().trim().split('\n');
      expect(lines).toEqual([`error: port ${port} is already in use (EADDRINUSE): stop the process that holds it or set PORT to a free port.`]);
      expect(svc.logs().filter((l) => l.msg === 'listening')).toEqual([]);
    } finally {
      holder.close();
    }
  }, 60_000);

  it('when npm run start:web finds its port in use, then npm exits non-zero and the line is in its output once', async () => {
    const holder = net.createServer().listen(0);
    await new Promise((r) => holder.once('listening', r));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const svc = start(['npm', 'run', 'start:web'], baseEnv(port));
      const exit = await within(svc.done, 45_000);
      expect(exit).not.toBeNull();
      expect(exit!.code).not.toBe(0);
      expect(svc.stderr().match(/already in use \(EADDRINUSE\)/g)).toHaveLength(1);
    } finally {
      holder.close();
    }
  }, 60_000);
});

describe('SIGTERM with a job that outlasts the timeout', () => {
  it('when a webhook delivery is still waiting on its receiver at SIGTERM, then the process exits 0 within SHUTDOWN_TIMEOUT_MS, and another worker delivers the event once the lock lapses', async () => {
    const { startReceiver } = await import('../helpers/receiver.ts');
    const receiver = await startReceiver((n) => (n === 0 ? 'hang' : 200));
    const port = await freePort();
    const env = {
      ...baseEnv(port),
      // A prefix of its own: the processes of the tests above (WORKER_LOCK_MS 30 s) leave the queue's
      // stalled-check marker set for up to 30 s, which would hold off this test's stall check.
      REDIS_PREFIX: `${dbName}_late`,
      SHUTDOWN_TIMEOUT_MS: '4000',
      WEBHOOK_TIMEOUT_MS: '60000',
      WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
      WORKER_LOCK_MS: '1000',
    };
    const svc = start(['node', 'src/main.ts'], env);
    try {
      await waitReady(port, svc.child);
      const api = (method: string, path: string, body?: unknown) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));
      const endpoint = await api('POST', '/v1/webhook-endpoints', { url: `${receiver.url}/hook`, enabled_events: ['checkout.session.expired'] });
      expect(endpoint.status).toBe(200);
      const session = await api('POST', '/v1/checkout/sessions', { amount: 1200, currency: 'usd', success_url: 'https://example.com/ok' });
      expect((await api('POST', `/v1/checkout/sessions/${session.body.id}/expire`)).status).toBe(200);
      await receiver.waitFor(1); // the first attempt now hangs in the worker

      const signalledAt = Date.now();
      svc.child.kill('SIGTERM');
      expect(await within(svc.done, 4000)).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalledAt).toBeLessThan(4000);
      expect(svc.logs().some((l) => String(l.msg).startsWith('shutdown: jobs still running were left'))).toBe(true);

      // A new worker takes the job over once its lock has lapsed, and the delivery succeeds.
      const worker = start(['node', 'src/worker.ts'], env);
      const [, second] = await receiver.waitFor(2, 20_000);
      expect(JSON.parse(second!.body)).toMatchObject({ type: 'checkout.session.expired', data: { object: { id: session.body.id } } });
      worker.child.kill('SIGTERM');
      expect(await within(worker.done, 4000)).toEqual({ code: 0, signal: null });
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
