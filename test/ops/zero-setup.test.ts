import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/process.ts';

// Issue 15, point 7: `npm start` on a machine with neither Postgres nor Redis. The machine's own
// services stay untouched: the service runs in a network namespace of its own, where nothing
// listens on 5432 or 6379. Issue 23, point 6: as root, from a clone of the project in a folder the
// postgres user cannot enter (a 0700 `mktemp -d`, as root's home in most containers), with no
// setting: the data folder and a copy of the binaries go where that user can reach them. The clone
// is this worktree's files with node_modules hard-linked (what `npm ci` would have put there).

const NS = `zs-${process.pid}-${randomBytes(3).toString('hex')}`;
const IP = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v ip'], { encoding: 'utf8' }).trim() || 'ip';
  } catch {
    return 'ip';
  }
})();

/** Null when a network namespace can be made here, else why not. */
function makeNamespace(): string | null {
  try {
    execFileSync(IP, ['netns', 'add', NS], { stdio: 'pipe' });
    execFileSync(IP, ['netns', 'exec', NS, IP, 'link', 'set', 'lo', 'up'], { stdio: 'pipe' });
    return null;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return `\`ip netns\` is not permitted here (${(e.stderr?.toString() || e.message).trim().split('\n')[0]})`;
  }
}
const unavailable = makeNamespace();

const tmp = mkdtempSync(join(tmpdir(), 'zero-setup-'));
chmodSync(tmp, 0o755); // the folders given as LOCAL_DATA_DIR below: the postgres user gets through
const asRoot = process.getuid?.() === 0;

/** The project cloned into a 0700 folder: the files git knows (untracked ones too), node_modules hard-linked. */
function cloneProject(): string {
  const home = mkdtempSync(join(tmpdir(), 'zero-setup-home-')); // 0700, as mktemp -d makes it
  const clone = join(home, 'payments-service');
  mkdirSync(clone);
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter((f) => f && !f.startsWith('node_modules/'));
  for (const f of files) {
    if (!existsSync(join(root, f))) continue; // deleted in the worktree
    mkdirSync(dirname(join(clone, f)), { recursive: true });
    copyFileSync(join(root, f), join(clone, f));
  }
  execFileSync('cp', ['-al', join(root, 'node_modules'), join(clone, 'node_modules')]);
  return clone;
}
const clone = unavailable || !asRoot ? root : cloneProject();
/** The data folder the service chose for itself (first test): under /var/lib/payments-service. */
let data = '';
const started: ChildProcess[] = [];

interface Proc {
  child: ChildProcess;
  out: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** A Node 24 script of the project, run inside the namespace. */
function inNs(script: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(IP, ['netns', 'exec', NS, process.execPath, script, ...args], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, out: () => stdout + stderr };
}

const FETCH = `const [url, init] = JSON.parse(process.argv[1]);
try { const r = await fetch(url, init); process.stdout.write(JSON.stringify({ status: r.status, text: await r.text() })); }
catch (e) { process.stdout.write(JSON.stringify({ status: 0, text: String(e) })); }`;

/** An HTTP call to the service, made from inside the namespace. */
async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: any }> {
  const out = await new Promise<string>((resolve, reject) => {
    const c = spawn(IP, ['netns', 'exec', NS, process.execPath, '--input-type=module', '-e', FETCH, JSON.stringify([`http://127.0.0.1:3000${path}`, init])], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let s = '';
    c.stdout.on('data', (d) => (s += d));
    c.on('exit', () => resolve(s));
    c.on('error', reject);
  });
  const { status, text } = JSON.parse(out) as { status: number; text: string };
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status, body };
}

async function waitReady(svc: Proc, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (svc.child.exitCode !== null || svc.child.signalCode !== null) throw new Error(`the service exited:\n${svc.out()}`);
    if ((await call('/readyz')).status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`/readyz never answered 200:\n${svc.out()}`);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};
const readPid = (file: string) => (existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : null);
const redisPid = (data: string) => (existsSync(join(data, 'redis.json')) ? (JSON.parse(readFileSync(join(data, 'redis.json'), 'utf8')) as { pid: number }).pid : null);
/** The start-up lines about Postgres and Redis. */
const serviceLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => /no (DATABASE|REDIS)_URL/.test(l))
    .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string }).msg : l));

afterAll(async () => {
  const chosen = data;
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // Whatever the data folders still run (a failed assertion, a crash drill): a PostgreSQL, a redis-server.
  for (const data of [chosen, join(tmp, 'handover'), join(tmp, 'prod'), join(tmp, 'noredis')].filter(Boolean)) {
    const pm = readPid(join(data, 'postgres', 'postmaster.pid'));
    if (pm && alive(pm) && readFileSync(`/proc/${pm}/cmdline`, 'utf8').includes(data)) process.kill(pm, 'SIGQUIT');
    const rd = redisPid(data);
    if (rd && alive(rd) && readFileSync(`/proc/${rd}/cmdline`, 'utf8').includes('redis-server')) process.kill(rd, 'SIGKILL');
  }
  if (!unavailable) {
    try {
      execFileSync(IP, ['netns', 'del', NS], { stdio: 'pipe' });
    } catch {
      // already gone
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  if (clone !== root) rmSync(dirname(clone), { recursive: true, force: true });
  if (chosen) rmSync(chosen, { recursive: true, force: true });
}, 30_000);

const skipped = unavailable ?? (asRoot ? null : 'not root: the fresh machine of issue 23 is root in a 0700 folder');
const suite = skipped ? describe.skip : describe;
suite(`zero set-up: npm start with neither Postgres nor Redis${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  // No LOCAL_DATA_DIR: the service chooses (the first test); the others give one in `tmp`.
  // A public-looking address: the embedded services alone say this is a developer's machine (issue 21).
  const env = { PATH: process.env.PATH, PORT: '3000', LOG_LEVEL: 'info', PUBLIC_BASE_URL: 'https://pay.example.com' };
  const start = () => inNs('src/main.ts', [], env);
  const stop = async (svc: Proc) => {
    svc.child.kill('SIGTERM');
    return svc.done;
  };

  it(
    'when nothing answers on 5432 and 6379 and root runs npm start from a 0700 folder with no setting, then it runs an embedded PostgreSQL (data and binaries where the postgres user reaches them, named in its line) and redis-server, keeps the data across a restart, a crash and a stale postmaster.pid, and stops them on SIGTERM',
    async () => {
      // First start: a new cluster (initdb), each service announced by one line.
      let t = Date.now();
      const first = start();
      await waitReady(first);
      const firstMs = Date.now() - t;
      const lines = serviceLines(first.out());
      expect(lines, first.out()).toHaveLength(2);
      // The clone's .data is out of the postgres user's reach: the data and a copy of the binaries
      // go to a folder of the project's own under /var/lib/payments-service, named in the line.
      const line = new RegExp(
        `^no DATABASE_URL and nothing on 127\\.0\\.0\\.1:5432: created and started the embedded PostgreSQL 15 on 127\\.0\\.0\\.1:\\d+, ` +
          `data in (/var/lib/payments-service/payments-service-data-[0-9a-f]{8})/postgres; binaries in \\1/postgres-binaries-[\\w.-]+ ` +
          `\\(outside the project: ${dirname(clone)} is closed to the OS user postgres, which runs PostgreSQL under root\\)$`,
      );
      expect(lines[0]).toMatch(line);
      data = line.exec(lines[0]!)![1]!;
      const pgdata = join(data, 'postgres');
      expect(statSync(dirname(clone)).mode & 0o777).toBe(0o700);
      expect(lines[1]).toMatch(/^no REDIS_URL and nothing on 127\.0\.0\.1:6379: started redis-server on 127\.0\.0\.1:\d+ \(no persistence\)$/);
      expect(await call('/healthz')).toMatchObject({ status: 200 });
      expect(await call('/readyz')).toEqual({ status: 200, body: { status: 'ok', checks: { postgres: 'ok', redis: 'ok' }, repair: expect.any(Object), config: expect.objectContaining({ production: false }) } });

      // keys:create while it runs uses the same PostgreSQL and names the new account.
      const k = await inNs('scripts/create-key.ts', ['--mode', 'test', '--name', 'Tea Room'], env).done;
      expect(k.code, k.stderr).toBe(0);
      expect(k.stdout).toMatch(/^sk_test_\w{32}\n$/);
      expect(k.stderr).toMatch(/using the embedded PostgreSQL 15 already running on 127\.0\.0\.1:\d+ \(started by process \d+\)/);
      const account = /created account (acct_\w+)/.exec(k.stderr)![1]!;
      const auth = { authorization: `Bearer ${k.stdout.trim()}`, 'content-type': 'application/json' };
      const created = await call('/v1/customers', { method: 'POST', headers: auth, body: JSON.stringify({ email: 'ada@example.com' }) });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const customer = created.body.id as string;
      // On the embedded services, test-mode webhook endpoints may be local by default.
      const local = await call('/v1/webhook-endpoints', { method: 'POST', headers: auth, body: JSON.stringify({ url: 'http://127.0.0.1:4000/hooks', enabled_events: ['*'] }) });
      expect(local.status, JSON.stringify(local.body)).toBe(200);

      const postmaster = readPid(join(pgdata, 'postmaster.pid'))!;
      const redis = redisPid(data)!;
      expect(alive(postmaster) && alive(redis)).toBe(true);
      const exit = await stop(first);
      expect(exit.code, exit.stderr).toBe(0);
      // Both stopped with the process; nothing is left that would block the next start.
      expect(alive(postmaster) || alive(redis)).toBe(false);
      expect(existsSync(join(pgdata, 'postmaster.pid'))).toBe(false);
      expect(existsSync(join(data, 'redis.json')) || existsSync(join(data, 'postgres.owner'))).toBe(false);

      // keys:create while the service is stopped starts the embedded PostgreSQL for itself, then stops it.
      const live = await inNs('scripts/create-key.ts', ['--mode', 'live', '--account', account], env).done;
      expect(live.code, live.stderr).toBe(0);
      expect(live.stdout).toMatch(/^sk_live_\w{32}\n$/);
      expect(live.stderr).toMatch(/started the embedded PostgreSQL 15 on 127\.0\.0\.1:\d+, data in .*; it stops when this command ends\n/);
      expect(existsSync(join(pgdata, 'postmaster.pid'))).toBe(false);

      // Second start: the same data.
      t = Date.now();
      const second = start();
      await waitReady(second);
      const secondMs = Date.now() - t;
      expect(serviceLines(second.out())[0]).toMatch(/: started the embedded PostgreSQL 15 on/);
      expect(await call(`/v1/customers/${customer}`, { headers: auth })).toMatchObject({ status: 200, body: { id: customer, email: 'ada@example.com' } });
      expect(await call('/v1/account', { headers: { authorization: `Bearer ${live.stdout.trim()}` } })).toMatchObject({
        status: 200,
        body: { id: account, livemode: true, business_name: 'Tea Room' },
      });

      // A crash (SIGKILL): PostgreSQL and redis-server outlive it; the next start takes them over.
      second.child.kill('SIGKILL');
      await second.done;
      const orphan = readPid(join(pgdata, 'postmaster.pid'))!;
      expect(alive(orphan)).toBe(true);
      const third = start();
      await waitReady(third);
      expect(serviceLines(third.out())).toEqual([
        expect.stringMatching(/: took over the embedded PostgreSQL 15 left running on 127\.0\.0\.1:\d+ by a process that ended/),
        expect.stringMatching(/: took over the embedded redis-server left running on 127\.0\.0\.1:\d+ by a process that ended/),
      ]);
      expect((await call(`/v1/customers/${customer}`, { headers: auth })).status).toBe(200);

      // Everything killed, and postmaster.pid left naming a live process that is not PostgreSQL (a pid
      // reused after a reboot), which would make PostgreSQL refuse to start: the next start recovers.
      third.child.kill('SIGKILL');
      await third.done;
      const pm = readPid(join(pgdata, 'postmaster.pid'))!;
      process.kill(pm, 'SIGKILL');
      process.kill(redisPid(data)!, 'SIGKILL');
      while (alive(pm)) await new Promise((r) => setTimeout(r, 50));
      const pidFile = readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n');
      pidFile[0] = String(process.pid);
      writeFileSync(join(pgdata, 'postmaster.pid'), pidFile.join('\n'));
      const fourth = start();
      await waitReady(fourth);
      expect(serviceLines(fourth.out())[0]).toMatch(/: started the embedded PostgreSQL 15 on/);
      expect((await call(`/v1/customers/${customer}`, { headers: auth })).status).toBe(200);
      const last = await stop(fourth);
      expect(last.code, last.stderr).toBe(0);
      expect(existsSync(join(pgdata, 'postmaster.pid'))).toBe(false);

      console.log(`zero set-up: first start (initdb) ready in ${firstMs} ms, second start in ${secondMs} ms`);
    },
    600_000,
  );

  it('when npm start begins while a command (keys:create, migrate) has the embedded PostgreSQL started, then it takes the server over and the command, ending, leaves it running', async () => {
    const handover = join(tmp, 'handover');
    const henv = { ...env, LOCAL_DATA_DIR: handover };
    // A command holding the server until SIGUSR2: what keys:create does, made to last.
    const HOLD = `const { loadConfig } = await import('./src/config.ts');
const { resolveLocalServices } = await import('./src/ops/local-services.ts');
const local = await resolveLocalServices({ ...loadConfig(), role: 'command', say: (line) => console.log(line) });
console.log('HOLDING');
process.on('SIGUSR2', async () => { await local.stop(); console.log('ENDED'); process.exit(0); });
setInterval(() => {}, 1000);`;
    const command = inNs('--input-type=module', ['-e', HOLD], henv);
    for (let i = 0; i < 600 && !command.out().includes('HOLDING'); i++) {
      if (command.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(command.out()).toMatch(/created and started the embedded PostgreSQL 15 on 127\.0\.0\.1:\d+[^\n]*\nHOLDING/);
    const postmaster = readPid(join(handover, 'postgres', 'postmaster.pid'))!;

    const svc = inNs('src/main.ts', [], henv);
    await waitReady(svc);
    expect(serviceLines(svc.out())[0]).toMatch(
      new RegExp(`: using the embedded PostgreSQL 15 a command \\(process ${command.child.pid}\\) started on 127\\.0\\.0\\.1:\\d+, and stopping it with this process`),
    );
    command.child.kill('SIGUSR2');
    expect((await command.done).code).toBe(0);
    expect(alive(postmaster)).toBe(true);
    expect((await call('/readyz')).status).toBe(200);

    const exit = await stop(svc);
    expect(exit.code, exit.stderr).toBe(0);
    expect(alive(postmaster)).toBe(false);
    expect(existsSync(join(handover, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 180_000);

  it('when NODE_ENV=production and nothing answers on 5432, then nothing is embedded and the start fails with one clear line', async () => {
    const prod = join(tmp, 'prod');
    const r = await inNs('src/main.ts', [], { ...env, NODE_ENV: 'production', LOCAL_DATA_DIR: prod }).done;
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: PostgreSQL is not reachable at 127\.0\.0\.1:5432 \(ECONNREFUSED\): start it .* or set DATABASE_URL\.$/)]);
    expect(r.stdout).not.toMatch(/embedded|redis-server/);
    expect(existsSync(prod)).toBe(false);
  }, 60_000);

  it('when redis-server is not installed, then npm start exits non-zero with one line naming the command that installs it, having started nothing', async () => {
    const bin = join(tmp, 'bin');
    mkdirSync(bin, { recursive: true });
    if (!existsSync(join(bin, 'node'))) symlinkSync(process.execPath, join(bin, 'node'));
    const noredis = join(tmp, 'noredis');
    const r = await inNs('src/main.ts', [], { ...env, PATH: bin, LOCAL_DATA_DIR: noredis }).done;
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      'error: Redis is not reachable at 127.0.0.1:6379, REDIS_URL is not set, and redis-server is not installed: install it (`apt-get install redis-server` or `brew install redis`) and start again, or set REDIS_URL.',
    ]);
    expect(existsSync(noredis)).toBe(false);
  }, 60_000);
});
