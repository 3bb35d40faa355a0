import net from 'node:net';
import { join } from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { resolveLocalServices } from '../src/ops/local-services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    templateDb: string;
    /** The first characters of every per-file database name of this run (test/helpers/server.ts). */
    testDbPrefix: string;
  }
}

const reachable = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const sock = net.connect({ host, port, timeout: 1000 });
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => (sock.destroy(), resolve(false)));
  });

/**
 * Where the tests find Postgres and Redis: DATABASE_URL / REDIS_URL when given, else the local
 * services when they answer, else containers through testcontainers when Docker answers, else the
 * same embedded PostgreSQL and redis-server as `npm start` (src/ops/local-services.ts), with a data
 * folder of their own (LOCAL_DATA_DIR/test, `.data/test` by default), stopped after the run.
 */
async function resolveServices(): Promise<{ databaseUrl: string; redisUrl: string; stop: () => Promise<void> }> {
  let databaseUrl = process.env.DATABASE_URL;
  let redisUrl = process.env.REDIS_URL;
  const stops: Array<() => Promise<unknown>> = [];
  if (!databaseUrl && (await reachable('127.0.0.1', 5432))) databaseUrl = 'postgres://postgres@127.0.0.1:5432/payments';
  if (!redisUrl && (await reachable('127.0.0.1', 6379))) redisUrl = 'redis://127.0.0.1:6379';
  if (!databaseUrl || !redisUrl) {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const docker = await getContainerRuntimeClient().then(
      () => true,
      () => false,
    );
    const config = loadConfig();
    if (!docker && config.localServices.embed) {
      const local = await resolveLocalServices({
        databaseUrl: databaseUrl ?? config.databaseUrl,
        redisUrl: redisUrl ?? config.redisUrl,
        localServices: { databaseUrlSet: !!databaseUrl, redisUrlSet: !!redisUrl, embed: true, dataDir: join(config.localServices.dataDir, 'test'), dataDirSet: config.localServices.dataDirSet },
        role: 'service',
        say: (line) => process.stderr.write(`[tests] ${line}\n`),
      });
      return { databaseUrl: local.databaseUrl, redisUrl: local.redisUrl, stop: local.stop };
    }
    if (!docker) {
      throw new Error(
        `tests need PostgreSQL and Redis: ${!databaseUrl ? 'no PostgreSQL answers on 127.0.0.1:5432 and DATABASE_URL is not set' : ''}` +
          `${!databaseUrl && !redisUrl ? '; ' : ''}${!redisUrl ? 'no Redis answers on 127.0.0.1:6379 and REDIS_URL is not set' : ''}` +
          ', no Docker engine answers for testcontainers, and NODE_ENV=production embeds nothing. Start them (see .ci/run) or set the URLs.',
      );
    }
    if (!databaseUrl) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const pg = await new PostgreSqlContainer('postgres:15-alpine').start();
      stops.push(() => pg.stop());
      databaseUrl = pg.getConnectionUri();
    }
    if (!redisUrl) {
      const { RedisContainer } = await import('@testcontainers/redis');
      const redis = await new RedisContainer('redis:7-alpine').start();
      stops.push(() => redis.stop());
      redisUrl = redis.getConnectionUrl();
    }
  }
  return { databaseUrl, redisUrl, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}

export default async function setup(project: TestProject) {
  const { databaseUrl, redisUrl, stop } = await resolveServices();
  const templateDb = `payments_test_template_${process.pid}`;
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  // One template for the run: the integration, browser and drills projects each run this setup, in
  // the same process (a migrated template is several seconds of the run's start).
  const shared = globalThis as { paymentsTestTemplate?: Promise<void> };
  shared.paymentsTestTemplate ??= (async () => {
    await sql`drop database if exists ${sql(templateDb)} with (force)`;
    await sql`create database ${sql(templateDb)}`;
    const tpl = new URL(databaseUrl);
    tpl.pathname = `/${templateDb}`;
    const tsql = postgres(tpl.toString(), { max: 1, onnotice: () => {} });
    await migrate(tsql);
    await tsql.end();
  })();
  await shared.paymentsTestTemplate;

  project.provide('databaseUrl', databaseUrl);
  project.provide('redisUrl', redisUrl);
  project.provide('templateDb', templateDb);
  const testDbPrefix = `t${process.pid}_`;
  project.provide('testDbPrefix', testDbPrefix);

  return async () => {
    // The per-file databases are dropped in the background as each file ends (server.ts): what a
    // worker that exited first left behind goes here. Only this run's: other runs may be going.
    // A worker's last close may still be cloning a spare for a next file that never came.
    for (let i = 0; i < 100; i++) {
      const [busy] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where query ilike ${`create database "${testDbPrefix}%`} and state = 'active'`;
      if (!busy!.n) break;
      await new Promise((r) => setTimeout(r, 100)); // bounded: 10 s
    }
    const left = await sql<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${testDbPrefix})`;
    for (const { datname } of left) await sql`drop database if exists ${sql(datname)} with (force)`;
    await sql`drop database if exists ${sql(templateDb)} with (force)`;
    await sql.end();
    await stop();
  };
}
