import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { StartupError } from '../lib/dependencies.ts';
import { alive, commandOf, freePort, gone, removeFile, signal, sleep, withLockFile, type EmbeddedService } from './pidfiles.ts';

/**
 * The machine's redis-server, started by `npm start` when no Redis answers (local-services.ts
 * decides when): a child process on 127.0.0.1 and a free port, without persistence (Redis only
 * carries work; the reconcile job re-enqueues from Postgres whatever a lost Redis held), in a
 * session of its own so that a Ctrl-C reaches Node first, which stops it after draining.
 *
 * Files, in the data folder: redis.json ({pid, port, owner}: where other processes find it, and
 * who stops it), redis.log, redis.lock (held while a process starts it).
 */

interface State {
  pid: number;
  port: number;
  owner: number;
}

/** True when `redis-server` can be run from PATH. */
export function redisServerInstalled(): boolean {
  const r = spawnSync('redis-server', ['--version'], { stdio: 'ignore', timeout: 10_000 });
  return !r.error;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port, timeout: 1000 });
    let answer = '';
    const done = (ok: boolean) => (sock.destroy(), resolve(ok));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      answer += d;
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    sock.once('error', () => done(false));
    sock.once('timeout', () => done(false));
  });
}

function readState(file: string): State | null {
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as State;
    return Number.isInteger(s.pid) && Number.isInteger(s.port) ? s : null;
  } catch {
    return null;
  }
}

/** The embedded redis-server recorded in `file`, when it still runs and answers. */
async function running(file: string): Promise<State | null> {
  const s = readState(file);
  if (s && alive(s.pid) && commandOf(s.pid)?.includes('redis-server') && (await ping(s.port))) return s;
  return null;
}

/** True when an embedded redis-server of `dataDir` runs, or one can be started. */
export async function embeddedRedisAvailable(dataDir: string): Promise<boolean> {
  return (await running(join(dataDir, 'redis.json'))) !== null || redisServerInstalled();
}

async function startServer(dataDir: string): Promise<{ pid: number; port: number } | null> {
  const logFile = join(dataDir, 'redis.log');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dataDir, '--logfile', logFile, '--daemonize', 'no'],
      { detached: true, stdio: 'ignore' },
    );
    const spawned = await new Promise<boolean>((resolve, reject) => {
      child.once('spawn', () => resolve(true));
      child.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? resolve(false) : reject(err)));
    });
    if (!spawned) return null;
    child.unref();
    const deadline = Date.now() + 10_000;
    while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
      if (await ping(port)) return { pid: child.pid!, port };
      await sleep(50);
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (attempt < 3) continue; // most likely the free port was taken meanwhile
    throw new StartupError(`redis-server did not start on 127.0.0.1:${port}; see ${logFile}`);
  }
}

/**
 * Uses the embedded redis-server of `dataDir`: the one already running (started by another process
 * of the project, or left by one that crashed: then taken over), or starts one. Null when
 * redis-server is not installed.
 */
export async function embeddedRedis(dataDir: string): Promise<EmbeddedService | null> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'redis.json');
  const found = await withLockFile(join(dataDir, 'redis.lock'), 30_000, 'the embedded redis-server', async () => {
    const s = await running(file);
    if (s) {
      const mine = !(s.owner !== process.pid && alive(s.owner));
      if (mine) writeFileSync(file, JSON.stringify({ ...s, owner: process.pid }));
      return { ...s, how: mine ? ('adopted' as const) : ('running' as const) };
    }
    removeFile(file);
    const started = await startServer(dataDir);
    if (!started) return null;
    writeFileSync(file, JSON.stringify({ ...started, owner: process.pid }));
    return { ...started, owner: process.pid, how: 'started' as const };
  });
  if (!found) return null;

  const { pid, port, how } = found;
  const where = `127.0.0.1:${port}`;
  let stopped = how === 'running';
  const release = () => {
    if (readState(file)?.owner === process.pid) removeFile(file);
  };
  return {
    url: `redis://${where}`,
    owned: how !== 'running',
    note: {
      started: `started redis-server on ${where} (no persistence)`,
      running: `using the embedded redis-server already running on ${where} (started by process ${found.owner})`,
      adopted: `took over the embedded redis-server left running on ${where} by a process that ended`,
    }[how],
    async stop() {
      if (stopped) return;
      stopped = true;
      signal(pid, 'SIGTERM');
      if (!(await gone(pid, 5000))) signal(pid, 'SIGKILL');
      release();
    },
    kill() {
      if (stopped) return;
      stopped = true;
      signal(pid, 'SIGTERM');
      release();
    },
  };
}
