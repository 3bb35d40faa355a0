import http, { type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, inject } from 'vitest';
import { createApp } from '../../src/app.ts';
import { accountExists, createAccount, createApiKey, type Mode } from '../../src/auth/keys.ts';
import { loadConfig } from '../../src/config.ts';
import { closeServices, createServices } from '../../src/compose.ts';
import type { Services } from '../../src/services.ts';
import { startWorkers, WORKERS, type RunningWorkers } from '../../workers/index.ts';
import type { WorkerDefinition } from '../../workers/types.ts';
import { cloneTemplateDb, deleteKeys, dropInBackground } from './process.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is, with no JSON encoding and no content type unless given in headers. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  s: Services;
  /** The per-file database, for checks behind the API's back. */
  sql: postgres.Sql;
  workers: RunningWorkers | null;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  /** A fresh account with a test key and a live key. */
  account(): Promise<{ accountId: string; test: string; live: string }>;
  key(accountId: string, mode: Mode): Promise<string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** true: every worker; a list: only those; default none. */
  workers?: boolean | WorkerDefinition<never>[];
  env?: Record<string, string>;
  /** The service's logger (a test of what is logged passes one writing to a capture). */
  log?: import('pino').Logger;
  /** The database to clone instead of the migrated template (a database a test prepared itself). */
  template?: string;
  /**
   * The host name of the service's address (PUBLIC_BASE_URL and `url`); default 127.0.0.1. Passkeys
   * need a name (`localhost`): WebAuthn refuses an IP address as the relying party.
   */
  host?: string;
  /** The service's DATABASE_URL made from the file's database (through PgBouncer, say); default: that database. */
  databaseUrl?: (direct: URL) => string;
}

/** A database cloned from the migrated template when the previous server of this worker closed. */
let spare: Promise<string | undefined> | undefined;

async function cloneNamed(adminSql: postgres.Sql, template?: string): Promise<string> {
  const name = `${inject('testDbPrefix')}${randomBytes(6).toString('hex')}`;
  await cloneTemplateDb(adminSql, name, template);
  return name;
}

/** A database of the server's own: the spare when there is one (and no other template is asked for). */
async function freshDatabase(adminSql: postgres.Sql, template?: string): Promise<string> {
  if (!template && spare) {
    const ready = await spare;
    spare = undefined;
    if (ready) return ready;
  }
  return cloneNamed(adminSql, template);
}

/**
 * The service on an ephemeral port, on a database of its own cloned from the migrated template,
 * under a Redis prefix of its own: one per test file, so files never see each other's data.
 */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const base = new URL(inject('databaseUrl'));
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const adminSql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  const name = await freshDatabase(adminSql, opts.template);
  const dbUrl = new URL(base);
  dbUrl.pathname = `/${name}`;

  let handler: RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const config = loadConfig({
    DATABASE_URL: opts.databaseUrl ? opts.databaseUrl(new URL(dbUrl)) : dbUrl.toString(),
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: name,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Every test payer comes from 127.0.0.1: the card-testing limits are set by the tests of them.
    RATE_LIMIT_LINK_SESSIONS_PER_HOUR: '0',
    RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR: '0',
    // The production address rules for webhook endpoints (a local `npm start` lets test-mode
    // endpoints be local): a test of local endpoints turns it on.
    WEBHOOK_TEST_LOCAL_TARGETS: 'false',
    ...opts.env,
  });
  const s = await createServices(config, opts.log ?? pino({ level: config.logLevel }));
  handler = createApp(s);
  const defs = opts.workers === true ? WORKERS : opts.workers || [];
  const workers = defs.length ? await startWorkers(s, defs) : null;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;

  const request = async (method: string, path: string, o: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };

  const key = async (accountId: string, mode: Mode) => {
    if (!(await accountExists(s.sql, accountId))) throw new Error(`no account ${accountId}`);
    return createApiKey(s.sql, accountId, mode);
  };

  return {
    url,
    s,
    sql: s.sql,
    workers,
    request,
    key,
    async account() {
      const accountId = await createAccount(s.sql);
      return { accountId, test: await key(accountId, 'test'), live: await key(accountId, 'live') };
    },
    async close() {
      await workers?.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      // A Redis Cluster is one the test started for itself, and goes with it.
      if (!s.config.redisCluster) await deleteKeys(s.redis as Redis, `${name}:*`);
      await closeServices(s);
      // The next file of this worker (its modules stay loaded) finds its database cloned already.
      spare ??= cloneNamed(adminSql).catch(() => undefined);
      dropInBackground(adminSql, name, spare);
    },
  };
}

/**
 * The test server of a file (or of a describe block): started in beforeAll, closed in afterAll.
 * `const t = useTestServer(...)` at the top, then `t.request(...)` inside the tests; the handle
 * reads through to the server once it has started. `opts` may be a function, called in beforeAll,
 * when the options depend on something an earlier beforeAll starts (a private Redis).
 */
export function useTestServer(opts: TestServerOptions | (() => TestServerOptions) = {}): TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer(typeof opts === 'function' ? opts() : opts);
  });
  afterAll(async () => {
    await server?.close();
  });
  const get = () => {
    if (!server) throw new Error('the test server starts in beforeAll: use it inside a hook or a test');
    return server;
  };
  return {
    get url() {
      return get().url;
    },
    get s() {
      return get().s;
    },
    get sql() {
      return get().sql;
    },
    get workers() {
      return get().workers;
    },
    request: (method, path, o) => get().request(method, path, o),
    account: () => get().account(),
    key: (accountId, mode) => get().key(accountId, mode),
    close: () => get().close(),
  };
}

/**
 * A second web process of the same deployment: its own services (key cache, pools) and HTTP port,
 * on the test server's database and Redis unless `env` says otherwise. Close it in a finally.
 */
export async function secondWebApp(t: TestServer, env: Record<string, string> = {}): Promise<{ url: string; s: Services; close(): Promise<void> }> {
  const s2 = await createServices(
    loadConfig({ DATABASE_URL: t.s.config.databaseUrl, REDIS_URL: t.s.config.redisUrl, REDIS_PREFIX: `${t.s.config.redisPrefix}_second`, LOG_LEVEL: 'silent', ...env }),
    pino({ level: 'silent' }),
  );
  const server = http.createServer(createApp(s2));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    s: s2,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await closeServices(s2);
    },
  };
}
