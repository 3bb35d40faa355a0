import { randomBytes } from 'node:crypto';
import net from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { dbUrl, freePort, runScript as run, waitReady } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';

const dbName = `t_proc_${randomBytes(4).toString('hex')}`;
const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
const baseEnv = () => ({
  PATH: process.env.PATH,
  DATABASE_URL: dbUrl(dbName),
  REDIS_URL: inject('redisUrl'),
  REDIS_PREFIX: dbName,
  LOG_LEVEL: 'info',
});

beforeAll(async () => {
  await admin`drop database if exists ${admin(dbName)} with (force)`;
});
afterAll(async () => {
  await admin`drop database if exists ${admin(dbName)} with (force)`;
  await admin.end();
});

describe('the service as a process', () => {
  it('when started on a database that does not exist, then it creates and migrates it, serves a new key, and stops cleanly on SIGTERM with a request in flight', async () => {
    const port = await freePort();
    const env = { ...baseEnv(), PORT: String(port) };
    const svc = run('src/main.ts', [], env);
    try {
      await waitReady(`http://127.0.0.1:${port}/readyz`, svc.child, svc.out);
      // A new account with its test key; the account id is on stderr, for the live key of the same account.
      const first = await run('scripts/create-key.ts', ['--mode', 'test'], env).done;
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^sk_test_[0-9A-Za-z]{32}\n$/);
      const id = /created account (acct_\w+)/.exec(first.stderr)?.[1];
      expect(id, first.stderr).toBeDefined();
      const acct1 = await fetch(`http://127.0.0.1:${port}/v1/account`, { headers: { authorization: `Bearer ${first.stdout.trim()}` } });
      expect(await acct1.json()).toEqual({ id, object: 'account', livemode: false, charges_enabled: true, business_name: null, support_email: null, brand_color: null, logo_url: null });

      const k = await run('scripts/create-key.ts', ['--mode', 'live', '--account', id!], env).done;
      expect(k.code, k.stderr).toBe(0);
      expect(k.stdout).toMatch(/^sk_live_[0-9A-Za-z]{32}\n$/);
      expect(k.stderr).toBe(`created a live key for account ${id}\n`);
      const secret = k.stdout.trim();
      const acct = await fetch(`http://127.0.0.1:${port}/v1/account`, { headers: { authorization: `Bearer ${secret}` } });
      // No live Stripe keys: live mode takes no payment, says so, and start-up logged it once.
      expect(await acct.json()).toMatchObject({ id, object: 'account', livemode: true, charges_enabled: false });
      expect(svc.out().split('\n').filter((l) => l.includes('live payments are off'))).toHaveLength(1);
      // The server's autovacuum setting, said once at start-up when it is off (src/db/settings.ts).
      const [row] = await admin<{ setting: string }[]>`select setting from pg_settings where name = 'autovacuum'`;
      expect(svc.out().split('\n').filter((l) => l.includes('autovacuum is off'))).toHaveLength(row!.setting === 'off' ? 1 : 0);

      // A request whose body is still arriving when SIGTERM comes is finished, then the process exits 0.
      const body = JSON.stringify({ email: 'inflight@example.com' });
      const sock = net.connect(port, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      let answer = '';
      sock.on('data', (d) => (answer += d));
      sock.write(
        `POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
      );
      // A drill of shutdown under a slow client: the pauses are the client's pace, not a wait for work.
      await new Promise((r) => setTimeout(r, 200));
      svc.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      sock.write(body.slice(5));
      await new Promise((r) => sock.once('close', r));
      expect(answer).toMatch(/^HTTP\/1.1 200/);
      const exit = await svc.done;
      expect(exit.code).toBe(0);
      expect(svc.out()).toContain('shutting down');
      const sql = postgres(dbUrl(dbName), { max: 1 });
      expect(await sql`select email from customers`).toEqual([{ email: 'inflight@example.com' }]);
      await sql.end();
    } finally {
      svc.child.kill('SIGKILL');
    }
  });

  it('when LOG_FLUSH_MS holds log lines back, then a request\'s access line is on stdout within that time, and the lines of the last moments are written when the process exits', async () => {
    const port = await freePort();
    const env = { ...baseEnv(), PORT: String(port), LOG_FLUSH_MS: '300' };
    const svc = run('src/main.ts', [], env);
    try {
      await waitReady(`http://127.0.0.1:${port}/readyz`, svc.child, svc.out);
      const lines = () => svc.out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; url?: string; reqId?: string });
      // A block of 4 KB is far away: only the timer writes this line.
      const res = await fetch(`http://127.0.0.1:${port}/v1/account`);
      const reqId = res.headers.get('request-id');
      expect(reqId).toMatch(/^req_/);
      await eventually(() => Promise.resolve(lines().some((l) => l.reqId === reqId)), 5_000);
      // Lines written just before SIGTERM and during the shutdown are all there once it exits.
      const last = await fetch(`http://127.0.0.1:${port}/v1/account`);
      const lastId = last.headers.get('request-id');
      svc.child.kill('SIGTERM');
      expect((await svc.done).code).toBe(0);
      expect(lines().some((l) => l.reqId === lastId)).toBe(true);
      expect(lines().some((l) => l.msg.startsWith('shutting down'))).toBe(true);
      expect(lines().at(-1)?.msg).toBe('stopped'); // the last line, written as the process ends
    } finally {
      svc.child.kill('SIGKILL');
    }
  });

  it.each([
    ['PostgreSQL', { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/payments' }, /PostgreSQL is not reachable at 127\.0\.0\.1:1 .*start it/],
    ['Redis', { REDIS_URL: 'redis://127.0.0.1:1' }, /Redis is not reachable at 127\.0\.0\.1:1 .*start it/],
  ])('when %s does not answer, then the process exits non-zero with one clear line', async (_name, override, pattern) => {
    for (const script of ['src/main.ts', 'src/web.ts', 'src/worker.ts']) {
      const r = await run(script, [], { ...baseEnv(), PORT: String(await freePort()), ...override }).done;
      expect(r.code).not.toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(pattern);
    }
  });

  it('when keys:create gets no valid mode, then it exits non-zero and prints nothing on stdout', async () => {
    const r = await run('scripts/create-key.ts', ['--mode', 'prod'], baseEnv()).done;
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--mode must be test or live/);
  });
});

describe('migrations', () => {
  it('when several processes migrate one new database at once, then each migration is applied once and recorded', async () => {
    const name = `t_mig_${randomBytes(4).toString('hex')}`;
    await admin`create database ${admin(name)}`;
    const conns = Array.from({ length: 4 }, () => postgres(dbUrl(name), { max: 2, onnotice: () => {} }));
    try {
      const results = await Promise.all(conns.map((c) => migrate(c)));
      const applied = results.flat();
      const recorded = await conns[0]!`select name from schema_migrations order by version`;
      expect(applied.sort()).toEqual(recorded.map((r) => r.name).sort());
      expect(recorded.length).toBeGreaterThan(0);
      expect(await migrate(conns[0]!)).toEqual([]);
    } finally {
      await Promise.all(conns.map((c) => c.end()));
      await admin`drop database if exists ${admin(name)} with (force)`;
    }
  });
});
