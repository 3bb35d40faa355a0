import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { looserRoleBounds } from '../../src/db/bounds.ts';
import { connect } from '../../src/db/sql.ts';
import { withTx } from '../../src/db/tx.ts';
import { Payer } from '../helpers/payer.ts';
import { pgbouncerInstalled, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { dbUrl, root, runScript } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually, sleep } from '../helpers/wait.ts';
import { createEndpoint, createSession } from '../helpers/factories.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { CARDS } from '../helpers/cards.ts';

// Issue 23, point 4: the service behind a PgBouncer 1.18 of this file in transaction pooling mode
// (test/helpers/pgbouncer.ts), in front of the tests' Postgres. The Postgres-restart drill through
// PgBouncer is test/ops/pgbouncer-restart.test.ts.

const installed = pgbouncerInstalled();
if (!installed && process.env.CI === 'true') throw new Error('test/ops/pgbouncer.test.ts needs pgbouncer: apt-get install pgbouncer');

const pg = new URL(inject('databaseUrl'));
let bouncer: PgBouncer;
let receiver: Receiver;
const seen = new Map<string, number>();
const eventId = (body: string) => (JSON.parse(body) as { id: string }).id;

beforeAll(async () => {
  if (!installed) return;
  bouncer = await startPgBouncer({ host: pg.hostname, port: Number(pg.port || 5432) });
  // Each event's first delivery attempt is refused, the next accepted: the retry path too.
  receiver = await startReceiver((_n, r) => {
    const n = (seen.get(eventId(r.body)) ?? 0) + 1;
    seen.set(eventId(r.body), n);
    return n === 1 ? 500 : 200;
  });
});
afterAll(async () => {
  await receiver?.close();
  await bouncer?.stop();
});

/** A file database's URL with PgBouncer's port in place of Postgres's. */
const through = (direct: URL) => {
  const u = new URL(direct);
  u.port = String(bouncer.port);
  return u.toString();
};

describe.skipIf(!installed)('behind PgBouncer in transaction pooling mode', () => {
  const t = useTestServer(() => ({
    workers: true,
    databaseUrl: through,
    env: {
      DATABASE_TRANSACTION_POOLING: 'true',
      DB_POOL_MAX: '10',
      DB_STATEMENT_TIMEOUT_MS: '1500',
      DB_LOCK_TIMEOUT_MS: '700',
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '2000',
      WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
      WEBHOOK_BACKOFF_BASE_MS: '300',
      RECONCILE_INTERVAL_MS: '1000',
    },
  }));

  it('when one connection of the pool makes transactions one after another, then PgBouncer serves them from different server sessions (transaction pooling)', async () => {
    // PgBouncer keeps a pool per database: the `postgres` database's is this test's alone.
    const client = connect(bouncer.url('postgres'), 1, undefined, t.s.config.dbSession);
    const holders = Array.from({ length: 4 }, () => connect(bouncer.url('postgres'), 1, undefined, t.s.config.dbSession));
    try {
      const pid = async (sql: typeof client) => (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
      const first = await pid(client);
      // Four transactions hold PgBouncer's four server sessions; all but the one `client` used end.
      // Each holder's release by the server session it holds (the holders reach their wait in any order).
      const release = new Map<number, () => void>();
      const pids = await Promise.all(
        holders.map(
          (h) =>
            new Promise<number>((got) => {
              void h.begin(async (tx) => {
                const held = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
                await new Promise<void>((r) => (release.set(held, r), got(held)));
              });
            }),
        ),
      );
      expect(new Set(pids).size).toBe(4);
      expect(pids).toContain(first);
      for (const [held, r] of release) if (held !== first) r();
      const second = await pid(client);
      for (const r of release.values()) r();
      expect(second).not.toBe(first);
    } finally {
      await Promise.all([client, ...holders].map((c) => c.end({ timeout: 1 })));
    }
    expect(t.s.config.dbSession).toEqual({ transactionPooling: true, prepare: false });
  });

  it('when many queries, with and without parameters, share the pool\'s connections at once, then every one is answered (nothing is pipelined through PgBouncer)', async () => {
    const sql = connect(t.s.config.databaseUrl, 10, undefined, t.s.config.dbSession);
    try {
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(
          Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? sql`select 1 as n` : i % 3 === 1 ? sql`select ${i}::int as n` : sql`select length(${'x'.repeat(i)}) as n`)),
        );
        expect(answers.map((r) => r[0]!.n)).toEqual(Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? 1 : i)));
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when hosted-page and test-helper payments, refunds and webhook deliveries (with a retry each) run through PgBouncer, then each is done once', async () => {
    const { accountId, test: key } = await t.account();
    await createEndpoint(t, key, { url: `${receiver.url}/hook` });
    const sessions = await Promise.all(Array.from({ length: 12 }, () => createSession(t, key)));
    const paid = await Promise.all(
      sessions.map(async (cs, i) => {
        if (i % 2) return (await new Payer(t).pay(cs.id)).status;
        return (await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key, body: { card: CARDS.visa } })).status;
      }),
    );
    expect(paid).toEqual(sessions.map((_, i) => (i % 2 ? 303 : 200)));
    const payments = await t.sql<{ id: string }[]>`select id from payments where account_id = ${accountId} and status = 'SUCCEEDED'`;
    expect(payments.length).toBe(sessions.length);
    const refunds = await Promise.all(payments.map((p) => t.request('POST', '/v1/refunds', { key, body: { payment_id: p.id } })));
    expect(refunds.map((r) => r.status)).toEqual(payments.map(() => 200));
    // The settle job of each refund (the refunds queue) completes it.
    await eventually(async () => {
      const rows = await t.sql<{ status: string }[]>`select status from refunds where account_id = ${accountId}`;
      return rows.length === payments.length && rows.every((r) => r.status === 'SUCCEEDED');
    }, 20_000, 100);

    const events = (await t.sql<{ id: string }[]>`select id from events where account_id = ${accountId}`).map((e) => e.id);
    await eventually(async () => {
      const rows = await t.sql<{ status: string }[]>`select d.status from webhook_deliveries d join events e on e.id = d.event_id where e.account_id = ${accountId}`;
      return rows.length === events.length && rows.every((r) => r.status === 'SUCCEEDED');
    }, 30_000, 200);
    const requests = new Map(events.map((id) => [id, 0]));
    for (const r of receiver.received) if (requests.has(eventId(r.body))) requests.set(eventId(r.body), requests.get(eventId(r.body))! + 1);
    expect([...requests.values()].filter((n) => n !== 2)).toEqual([]);
    expect(events.length).toBeGreaterThanOrEqual(sessions.length * 3); // completed, payment succeeded, refund
    expect(bouncer.log()).not.toMatch(/unsupported startup parameter/);
  }, 90_000);

  it('when a transaction runs through PgBouncer, then it carries the statement, lock and idle bounds, and each of them ends what passes it', async () => {
    const bounds = await withTx(t.s, t.s.log, (tx) =>
      tx.sql<{ s: string; l: string; i: string }[]>`select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l, current_setting('idle_in_transaction_session_timeout') as i`,
    );
    expect(bounds[0]).toEqual({ s: '1500ms', l: '700ms', i: '2s' });

    const statement = await withTx(t.s, t.s.log, (tx) => tx.sql`select pg_sleep(5)`).catch((e: { code?: string }) => e.code);
    expect(statement).toBe('57014');

    // A row held by another session (directly on Postgres): the lock bound gives up waiting.
    const { accountId } = await t.account();
    const direct = postgres(dbUrl(new URL(t.s.config.databaseUrl).pathname.slice(1)), { max: 1, onnotice: () => {} });
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = direct.begin(async (tx) => {
        await tx`select id from accounts where id = ${accountId} for update`;
        locked();
        await held;
      });
      await isLocked;
      const lock = await withTx(t.s, t.s.log, (tx) => tx.sql`update accounts set business_name = 'x' where id = ${accountId}`).catch((e: { code?: string }) => e.code);
      release();
      await holder;
      expect(lock).toBe('55P03');
    } finally {
      await direct.end();
    }

    // A transaction left idle past the bound is ended by Postgres, its work rolled back.
    const idle = await withTx(t.s, t.s.log, async (tx) => {
      await tx.sql`update accounts set business_name = 'idle' where id = ${accountId}`;
      await sleep(3000); // idle inside the transaction for longer than the 2 s bound (what the drill is about)
      await tx.sql`select 1`;
    }).catch((e: { code?: string }) => e.code);
    // Postgres ends the session (25P03); PgBouncer then closes the client's connection.
    expect(idle).toBe('CONNECTION_CLOSED');
    const [row] = await t.sql<{ business_name: string | null }[]>`select business_name from accounts where id = ${accountId}`;
    expect(row!.business_name).not.toBe('idle');

    // Nothing of it leaked into the server sessions: outside a transaction, the role's defaults (none here).
    expect(await looserRoleBounds(t.sql, t.s.config.dbTimeouts)).toEqual([
      { setting: 'statement_timeout', configuredMs: 1500, serverMs: 0 },
      { setting: 'lock_timeout', configuredMs: 700, serverMs: 0 },
      { setting: 'idle_in_transaction_session_timeout', configuredMs: 2000, serverMs: 0 },
    ]);
  });
});

describe.skipIf(!installed)('migrations through PgBouncer', () => {
  it('when npm run migrate runs through PgBouncer on a new database, then it creates it, applies every migration once and writes the bounds as the role\'s defaults there', async () => {
    const name = `t_pgb_${randomBytes(4).toString('hex')}`;
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: bouncer.url(name),
      DATABASE_TRANSACTION_POOLING: 'true',
      DB_STATEMENT_TIMEOUT_MS: '25000',
      DB_LOCK_TIMEOUT_MS: '5000',
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '20000',
    };
    const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
    try {
      const first = await runScript('scripts/migrate.ts', [], env).done;
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/^applied: 0001_/m);
      const again = await runScript('scripts/migrate.ts', [], env).done;
      expect(again.stderr).toBe('database is up to date\n');

      const [settings] = await admin<{ setconfig: string[] }[]>`
        select s.setconfig from pg_db_role_setting s join pg_database d on d.oid = s.setdatabase
        where d.datname = ${name} and s.setrole = (select oid from pg_roles where rolname = 'postgres')`;
      expect([...settings!.setconfig].sort()).toEqual(['idle_in_transaction_session_timeout=20000', 'lock_timeout=5000', 'statement_timeout=25000']);

      // A server session PgBouncer opens afterwards starts with them: no bound is looser than configured.
      bouncer.console('RECONNECT');
      const sql = connect(bouncer.url(name), 1, undefined, { transactionPooling: true, prepare: false });
      try {
        expect(await looserRoleBounds(sql, { statementMs: 25000, lockMs: 5000, idleInTransactionMs: 20000 })).toEqual([]);
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from schema_migrations`;
        expect(row!.n).toBe(readdirSync(join(root, 'migrations')).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).length);
      } finally {
        await sql.end();
      }
    } finally {
      await admin`drop database if exists ${admin(name)} with (force)`;
      await admin.end();
    }
  }, 60_000);
});
