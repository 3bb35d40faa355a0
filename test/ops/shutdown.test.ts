import net from 'node:net';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { dbUrl, freePort, waitReady } from '../helpers/process.ts';
import { eventually, sleep } from '../helpers/wait.ts';
import { alive, procfile, useServiceProcesses, within } from './service-processes.ts';

// Idle connections get min(keep-alive 5 s, SHUTDOWN_TIMEOUT_MS / 4) = 3 s: past the second after the
// signal at which the test still uses its kept-alive connections, on a loaded machine too.
const SHUTDOWN_TIMEOUT_MS = 12_000;
const p = useServiceProcesses('stop', SHUTDOWN_TIMEOUT_MS);
const { start, baseEnv } = p;

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
    `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.secret()}\r\n` +
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


/** True once a new connection is refused (bounded: 3 s). */
async function refused(port: number): Promise<boolean> {
  for (let i = 0; i < 30; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(false)));
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (ok) return true;
    await sleep(100); // a poll: the listener closes a moment after the signal
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
      await waitReady(`http://127.0.0.1:${port}/readyz`, svc.child, svc.stderr);
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

      const sql = postgres(dbUrl(p.dbName), { max: 1, onnotice: () => {} });
      try {
        const rows = await sql`select email from customers where email like ${`%-${tag}@example.com`} order by email`;
        expect(rows.map((r) => r.email)).toEqual([`early-${tag}@example.com`, `inflight-${tag}@example.com`]);
      } finally {
        await sql.end();
      }
    },
    60_000,
  );
});
