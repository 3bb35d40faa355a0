import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type postgres from 'postgres';
import { inject } from 'vitest';

/** The repository root, where the service's scripts are run from. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/** The test server's Postgres URL pointed at another database. */
export function dbUrl(name: string): string {
  const u = new URL(inject('databaseUrl'));
  u.pathname = `/${name}`;
  return u.toString();
}

export { freePort } from '../../src/ops/pidfiles.ts';

/**
 * Creates database `name` as a copy of the migrated template of the run, or of `template` (`admin`:
 * a connection to another database).
 */
export async function cloneTemplateDb(admin: postgres.Sql, name: string, template = inject('templateDb')): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await admin`create database ${admin(name)} template ${admin(template)}`;
      return;
    } catch (err) {
      if (attempt > 20) throw err; // the template is briefly busy while another file clones it
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

/**
 * Drops a file's database without making the file wait for it, then ends `admin`. A drop took about
 * 0.65 s a file (Postgres waits for the closed pool's backends to exit, in steps of 100 ms), a
 * tenth of the suite's file time in all. What a worker leaves when it exits first, the global
 * setup's teardown drops (test/global-setup.ts). `before`: what `admin` must finish first (one
 * connection, one statement at a time).
 */
export function dropInBackground(admin: postgres.Sql, name: string, before?: Promise<unknown>): void {
  void Promise.resolve(before)
    .then(() => admin`drop database if exists ${admin(name)} with (force)`)
    .catch(() => {})
    .finally(() => admin.end());
}

/** One of the service's scripts as a child process on the project's Node, its output collected. */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done, out: () => stdout };
}

/**
 * Polls `url` (a service's /readyz) until it answers 2xx. A new database is created and every
 * migration applied first, and a cluster of two web processes starts them seconds apart: on a loaded
 * CI machine that has taken over 20 s, so the wait is a 60 s deadline. Fails at once when the process
 * exits, and in both failures shows `output` (what the process printed).
 */
export async function waitReady(url: string, child: ChildProcess, output: () => string = () => '', ms = 60_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${output()}`);
    const ok = await fetch(url, { headers: { connection: 'close' } }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100)); // a poll until the process answers
  }
  throw new Error(`${url} never answered:\n${output()}`);
}

/**
 * Deletes the keys matching `pattern` with SCAN, in steps: KEYS holds Redis for a walk of every key
 * it has, and with several files closing at once beside a large keyspace, other files' commands
 * timed out behind it (a full run at four workers).
 */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

/** Deletes every key a child process left under `prefix` (its REDIS_PREFIX) in the tests' Redis. */
export async function dropRedisPrefix(prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(inject('redisUrl'));
  try {
    await deleteKeys(redis, `${prefix}:*`);
  } finally {
    await redis.quit();
  }
}
