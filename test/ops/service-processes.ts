import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { dbUrl, root, runScript, dropRedisPrefix } from '../helpers/process.ts';

/**
 * The service's own commands (node src/…, npm scripts, Procfile lines) as child processes, for the
 * shutdown and start-up drills: a database of the file's own with a test key, the environment they
 * start with, and every process they started ended after the file.
 */
export function useServiceProcesses(tag: string, shutdownTimeoutMs: number) {
  const dbName = `t_${tag}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
  const children: ChildProcess[] = [];
  const servicePids = new Set<number>();
  const readLogs: Array<() => unknown> = [];
  let secret = '';
  /** Redis prefixes of the file's processes: the database's name, and those a test names with `prefix`. */
  const prefixes = new Set([dbName]);
  const prefix = (name: string) => (prefixes.add(name), name);

  const baseEnv = (port: number): NodeJS.ProcessEnv => ({
    // node_modules/.bin first: npm (a `#!/usr/bin/env node` script) and its scripts then run on Node 24.
    PATH: `${root}node_modules/.bin:${process.env.PATH}`,
    HOME: process.env.HOME,
    DATABASE_URL: dbUrl(dbName),
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: dbName,
    LOG_LEVEL: 'info',
    PORT: String(port),
    SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
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
    for (const prefix of prefixes) await dropRedisPrefix(prefix);
  });

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

  return { dbName, secret: () => secret, baseEnv, start, prefix };
}

/** The command of a Procfile entry. */
export function procfile(name: string): string {
  const line = readFileSync(`${root}Procfile`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return line!.slice(name.length + 1).trim();
}

/** Resolves with whatever the process did within `ms`: its exit, or null while it still runs. */
export const within = <T,>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

