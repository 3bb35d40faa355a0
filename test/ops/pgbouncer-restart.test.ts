import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { pgbouncerInstalled, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { postgresProxy } from '../helpers/postgres-proxy.ts';
import { dbUrl, dropRedisPrefix } from '../helpers/process.ts';
import { sleep } from '../helpers/wait.ts';
import { expectSurvived, startDrillService, startLoad, type DrillService } from './outage-drill.ts';

// Issue 23, point 4: the Postgres outage drill of test/ops/postgres-restart.test.ts through a
// PgBouncer in transaction mode. The shared Postgres is never touched: PgBouncer reaches it through
// a proxy that the drill cuts (open server connections reset, new ones refused), as a Postgres
// restart or a network cut looks from PgBouncer. Web and worker run as separate processes.

const installed = pgbouncerInstalled();
if (!installed && process.env.CI === 'true') throw new Error('test/ops/pgbouncer-restart.test.ts needs pgbouncer: apt-get install pgbouncer');

const suffix = randomBytes(4).toString('hex');
const prefix = `t_pgbrestart_${suffix}`;
const database = `t_pgbrestart_${suffix}`;
let proxy: Awaited<ReturnType<typeof postgresProxy>> | undefined;
let bouncer: PgBouncer | undefined;
let svc: DrillService | undefined;

afterAll(async () => {
  await svc?.stop();
  await bouncer?.stop();
  await proxy?.down();
  const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
  await admin`drop database if exists ${admin(database)} with (force)`;
  await admin.end();
  await dropRedisPrefix(prefix);
});

describe.skipIf(!installed)('a Postgres outage behind PgBouncer under load', () => {
  it('when every connection from PgBouncer to Postgres is cut for 4 s under load, then both processes live, outage calls are quick 503s with Retry-After, and every acknowledged write and every event survives', async () => {
    const pg = new URL(inject('databaseUrl'));
    proxy = await postgresProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    bouncer = await startPgBouncer({ host: '127.0.0.1', port: proxy.port() });
    svc = await startDrillService({
      DATABASE_URL: bouncer.url(database),
      DATABASE_TRANSACTION_POOLING: 'true',
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: prefix,
    });
    const load = startLoad(svc);

    await sleep(1500); // load before the cut (the drill's timeline)
    await proxy.down();
    const downAt = Date.now();
    await sleep(4000); // Postgres out of reach for 4 s
    await proxy.up();
    const upAt = Date.now();
    await sleep(2500); // load after Postgres is back
    await load.stop();

    const slowest = Math.max(...load.calls.map((c) => c.ms));
    const unavailable = load.calls.filter((c) => c.status === 503).length;
    console.log(`pgbouncer outage drill: ${load.calls.length} calls, ${unavailable} answered 503, the slowest in ${slowest} ms`);
    // PgBouncer holds a query at most query_wait_timeout (2 s here) for a server connection.
    await expectSurvived(svc, load, { databaseUrl: dbUrl(database), maxMs: 4000, downAt, upAt });
    expect(bouncer.log()).not.toMatch(/unsupported startup parameter/);
  }, 90_000);
});
