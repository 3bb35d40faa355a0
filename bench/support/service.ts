// The service under test, as a child process with the project's Node.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { freePort } from '../../src/ops/pidfiles.ts';
import path from 'node:path';
import { Redis } from 'ioredis';
import { OUT_DIR, processCpuSeconds, REDIS_URL, ROOT, sleep } from './base.ts';

export interface Service {
  url: string;
  port: number;
  pid: number;
  logFile: string;
  /** CPU seconds (user + system) the service process has used so far; NaN where /proc is missing. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  suite: string;
  databaseUrl: string;
  /** `main` (npm start: web and workers in one process, the default) or `web` (npm run start:web). */
  entry?: 'main' | 'web';
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** The checkout to run (an A/B against another version, bench/floors.ts); default this one. */
  cwd?: string;
  /** Redis prefix suffix, for two services of one suite side by side. */
  instance?: string;
}


function parseAssignments(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(/\s+/).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}

/** Variables set through BENCH_SERVICE_ENV for an experiment; empty for a real run. */
export function serviceEnvNote(): string {
  const extra = parseAssignments(process.env.BENCH_SERVICE_ENV);
  const keys = Object.keys(extra);
  return keys.length ? `**Not the default configuration:** ${keys.map((k) => `${k}=${extra[k]}`).join(' ')}` : '';
}

// Variables that would change the service's configuration away from its defaults.
const CONFIG_OVERRIDES = ['LOG_LEVEL', 'DB_POOL_MAX', 'API_KEY_CACHE_SECONDS', 'WEB_CONCURRENCY', 'PUBLIC_BASE_URL', 'CHECKOUT_URL', 'PUBLIC_LINK_URL', 'NODE_OPTIONS'];

export async function clearRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}


function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Starts the service as its own process (the project's Node), and waits for /readyz. */
export async function startService(o: ServiceOptions): Promise<Service> {
  const port = await freePort();
  const prefix = `bench_${o.suite}${o.instance ? `_${o.instance}` : ''}`;
  await clearRedisPrefix(prefix);
  mkdirSync(OUT_DIR, { recursive: true });
  const logFile = path.join(OUT_DIR, `${o.suite}${o.instance ? `-${o.instance}` : ''}-service.log`);
  const fd = openSync(logFile, 'w');
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of CONFIG_OVERRIDES) delete env[k];
  Object.assign(env, {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    PORT: String(port),
    LOG_LEVEL: 'info',
    ...parseAssignments(process.env.BENCH_SERVICE_ENV),
    ...o.env,
  });
  const nodeArgs = [...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean), ...(o.nodeArgs ?? [])];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, `src/${o.entry ?? 'main'}.ts`], {
    cwd: o.cwd ?? ROOT,
    env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? (signal ? -1 : null);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`the service exited (${exited}) before it was ready:\n${tail(logFile)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not ready within 60 s:\n${tail(logFile)}`);
    }
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    await sleep(100);
  }
  return {
    url,
    port,
    pid: child.pid!,
    logFile,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    async stop() {
      if (exited === undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exit;
        clearTimeout(timer);
      }
      await clearRedisPrefix(prefix);
    },
  };
}

/** One call to the service's API with a key; throws on any answer but 2xx. */
export async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as unknown;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
