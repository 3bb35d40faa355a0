import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import net from 'node:net';
import { StartupError } from '../lib/dependencies.ts';

/**
 * What the embedded services (local-services.ts) need to find, share and clean up the processes
 * they start: is a process alive, what is its command line, is a port answering, a lock file.
 */

/** A PostgreSQL or redis-server of the project, started or found by this process. */
export interface EmbeddedService {
  /** How to connect to it (with its password). */
  url: string;
  /** What was done, for the one start-up line: "started the embedded PostgreSQL 15 on 127.0.0.1:41234, data in …". */
  note: string;
  /** True when this process started it or took it over, and so stops it. */
  owned: boolean;
  /** Stops it and waits, when this process started it or took it over; else nothing. */
  stop(): Promise<void>;
  /** At process exit: asks it to stop without waiting (same condition). */
  kill(): void;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** True when a process with this id runs (another user's included; a zombie does not count). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // "pid (comm) S …": an exited process nobody has reaped yet (its parent is not waiting for it) is Z.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS)
  }
}

/** The command line of a live process, or null when it is gone or cannot be read. */
export function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() || null;
  } catch {
    // no such process, or no /proc (macOS): ask ps
  }
  try {
    return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || null;
  } catch {
    return null;
  }
}

/** Sends a signal to a process that may already be gone. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/** Waits until the process is gone; false when it is still there after `ms`. */
export async function gone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** True when something accepts a TCP connection on host:port within `timeoutMs`. */
export function answers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port, timeout: timeoutMs });
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => (sock.destroy(), resolve(false)));
  });
}

/** A port that nothing listens on right now (on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The pid written in a file, or null when the file is missing or holds no pid. */
export function readPid(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim().split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * Runs `fn` holding the lock file `path` (it holds our pid), so that two processes starting at once
 * (`npm start` and `keys:create`) do not both create or start the same service. A lock left by a
 * process that is gone is taken over.
 */
export async function withLockFile<T>(path: string, waitMs: number, what: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readPid(path);
    let age: number;
    try {
      age = Date.now() - statSync(path).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    // No pid yet: its holder is between creating and writing it, unless that was long ago.
    if (holder === null ? age > 5000 : !alive(holder)) {
      removeFile(path);
      continue;
    }
    if (Date.now() > deadline) throw new StartupError(`${what} is being started by process ${holder} (lock file ${path}); try again once it has started.`);
    await sleep(100);
  }
  try {
    return await fn();
  } finally {
    removeFile(path);
  }
}
