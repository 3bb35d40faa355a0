import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { insertEmail } from '../../src/email/store.ts';
import { canonical } from '../../src/idempotency/middleware.ts';
import { idFloor, idTime, newId } from '../../src/lib/ids.ts';
import { isHandled, markHandled } from '../../src/processor-events/store.ts';
import { runRetention } from '../../src/retention/service.ts';
import { dbUrl, root } from '../helpers/process.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { BOUNDED, DAY, idAt, otherTableCounts, partitions } from './helpers.ts';

// Migrations 0024 to 0027 on a database of the release before them, with rows in every table they
// convert: nothing lost, the same ids, the old tables kept whole as legacy partitions, and every
// query of the service working on the result, through HTTP.

const MIGRATIONS = join(root, 'migrations');
const FIRST = 24; // 0024_bounded_tables_prepare.sql

/** A folder holding the migrations numbered below `below`. */
function migrationsBelow(below: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const f of readdirSync(MIGRATIONS)) if (/^\d{4}_/.test(f) && Number(f.slice(0, 4)) < below) cpSync(join(MIGRATIONS, f), join(dir, f));
  return dir;
}

const name = `t_conv_${randomBytes(5).toString('hex')}`;
let admin: postgres.Sql;
let sql: postgres.Sql;
const dirs: string[] = [];

beforeAll(async () => {
  const u = new URL(inject('databaseUrl'));
  u.pathname = '/postgres';
  admin = postgres(u.toString(), { max: 1, onnotice: () => {} });
  await admin`create database ${admin(name)}`;
  sql = postgres(dbUrl(name), { max: 4, onnotice: () => {} });
  dirs.push(migrationsBelow(FIRST));
  await migrate(sql, dirs[0]);
});

afterAll(async () => {
  await sql?.end();
  await admin`drop database if exists ${admin(name)} with (force)`;
  await admin.end();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const accountId = `acct_${randomBytes(8).toString('hex')}`;
const endpointId = newId('we');
const HOUR = 3600_000;
const fingerprint = (method: string, path: string, body: unknown) => createHash('sha256').update(`${method} ${path}\n${canonical(body)}`).digest('hex');

interface Seeded {
  events: string[];
  deliveries: string[];
  /** An id minted before issue 9 (26 characters after the prefix). */
  shortEvent: string;
  emailDedupe: string;
  stripeEvent: string;
  liveKey: { key: string; body: { email: string } };
  expiredKey: { key: string; body: { email: string } };
}

/** Rows in every converted table, as the release before wrote them (over the last three days). */
async function seed(): Promise<Seeded> {
  const now = Date.now();
  await sql`insert into accounts (id) values (${accountId})`;
  await sql`insert into webhook_endpoints (id, account_id, livemode, url, secret, enabled_events)
            values (${endpointId}, ${accountId}, false, 'https://example.com/hooks', ${`whsec_${randomBytes(24).toString('base64url')}`}, ${['*']})`;
  const times = Array.from({ length: 40 }, (_, i) => now - 3 * DAY + i * HOUR);
  const events = times.map((ms) => idAt('evt', ms));
  const shortEvent = `evt_${idFloor('evt', now - 4 * DAY).slice(4, 14)}${'k'.repeat(16)}`;
  const all = [shortEvent, ...events];
  const deliveries = all.map((e) => idAt('wd', idTime(e) + 5));
  for (const [i, e] of all.entries()) {
    const ms = idTime(e);
    await sql`insert into events (id, account_id, livemode, type, api_version, data, created_at)
              values (${e}, ${accountId}, false, 'payment.succeeded', '2026-11-01', ${JSON.stringify({ object: { id: `pay_${i}`, object: 'payment', livemode: false } })}::text::json, ${new Date(ms)})`;
    await sql`insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, attempt_count, created_at)
              values (${deliveries[i]!}, ${accountId}, false, ${e}, ${endpointId}, 'SUCCEEDED', 3, ${new Date(ms)})`;
    for (const n of [1, 2, 3]) {
      await sql`insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
                values (${deliveries[i]!}, ${n}, ${new Date(ms + n * 1000)}, 20, ${n < 3 ? 500 : 200})`;
    }
    await sql`insert into emails (id, account_id, livemode, to_address, template, subject, text_body, html_body, status, related_object, dedupe_key, created_at)
              values (${idAt('em', ms + 10)}, ${accountId}, false, 'payer@example.com', 'receipt', 'Receipt', 'text', '<p>html</p>', 'SENT', ${`pay_${i}`}, ${`receipt:pay_${i}`}, ${new Date(ms)})`;
  }
  const stripeEvent = 'evt_1LegacyStripeEvent';
  await sql`insert into processor_events (id, type, livemode, received_at) values (${stripeEvent}, 'charge.refunded', false, now() - interval '2 days')`;
  const liveKey = { key: 'legacy-live', body: { email: 'first@example.com' } };
  const expiredKey = { key: 'legacy-expired', body: { email: 'again@example.com' } };
  await sql`insert into idempotency_keys (account_id, livemode, key, fingerprint, status, response, request_id, created_at)
            values (${accountId}, false, ${liveKey.key}, ${fingerprint('POST', '/v1/customers', liveKey.body)}, 200,
                    ${sql.json({ id: 'cus_fromthelegacykey', object: 'customer' })}, 'req_legacy', now() - interval '1 hour')`;
  await sql`insert into idempotency_keys (account_id, livemode, key, fingerprint, status, response, request_id, created_at)
            values (${accountId}, false, ${expiredKey.key}, ${fingerprint('POST', '/v1/customers', expiredKey.body)}, 200,
                    ${sql.json({ id: 'cus_expired', object: 'customer' })}, 'req_old', now() - interval '25 hours')`;
  return { events, deliveries, shortEvent, emailDedupe: 'receipt:pay_0', stripeEvent, liveKey, expiredKey };
}

const KEYS: Record<string, string> = {
  events: 'id',
  webhook_deliveries: 'id',
  webhook_attempts: 'delivery_id, attempt',
  emails: 'id',
  processor_events: 'id',
  idempotency_keys: 'account_id, livemode, key',
};

/** Every row of every converted table, in key order. */
async function contents(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of BOUNDED) out[table] = await sql.unsafe(`select * from ${table} order by ${KEYS[table]}`);
  return out;
}

describe('converting a populated database (0024 to 0027)', () => {
  let seeded: Seeded;
  let before: Record<string, unknown[]>;
  let countsBefore: Record<string, number>;
  let t: TestServer | undefined;
  afterAll(async () => {
    await t?.close();
  });

  it('when 0025 validates the legacy bounds, then writes to the tables go on during it (no lock but SHARE UPDATE EXCLUSIVE)', async () => {
    seeded = await seed();
    dirs.push(migrationsBelow(FIRST + 1));
    expect(await migrate(sql, dirs[1])).toEqual(['0024_bounded_tables_prepare.sql']);

    const validate = readFileSync(join(MIGRATIONS, '0025_bounded_tables_validate.sql'), 'utf8');
    const writer = postgres(dbUrl(name), { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(validate);
        const locks = await tx<{ relation: string; mode: string }[]>`
          select relation::regclass::text as relation, mode from pg_locks
          where pid = pg_backend_pid() and locktype = 'relation' and relation::regclass::text = any(${BOUNDED}::text[])`;
        expect(new Set(locks.map((l) => l.mode))).toEqual(new Set(['ShareUpdateExclusiveLock']));
        // Another connection writes while the validating transaction is still open: not blocked.
        await writer.begin(async (w) => {
          await w`set local lock_timeout = '2s'`;
          await w`insert into events (id, account_id, livemode, type, api_version, data) values (${newId('evt')}, ${accountId}, false, 'payment.succeeded', '2026-11-01', '{}')`;
          await w`insert into idempotency_keys (account_id, livemode, key, fingerprint, request_id) values (${accountId}, false, 'during-validate', 'fp', 'req_2')`;
        });
      });
    } finally {
      await writer.end();
    }
    before = await contents();
    countsBefore = await otherTableCounts(sql);
  });

  it('when 0026 runs, then every row is still there with the same values, in a legacy partition below the cutover, and the regular partitions start there', async () => {
    expect(await migrate(sql, MIGRATIONS)).toEqual(expect.arrayContaining(['0025_bounded_tables_validate.sql', '0026_bounded_tables_swap.sql', '0027_bounded_tables_ahead.sql']));
    // The same rows with the same values; columns later migrations add (0038's object_id) left out.
    const now = await contents();
    const asBefore = (table: string, row: unknown) => Object.fromEntries(Object.keys((before[table]![0] ?? {}) as object).map((k) => [k, (row as Record<string, unknown>)[k]]));
    expect(Object.fromEntries(Object.entries(now).map(([table, rows]) => [table, rows.map((r) => asBefore(table, r))]))).toEqual(before);
    // The tables that were there keep their rows; the ones later migrations add (after 0027) are empty.
    const after = await otherTableCounts(sql);
    expect(Object.fromEntries(Object.keys(countsBefore).map((t) => [t, after[t]]))).toEqual({ ...countsBefore, schema_migrations: after.schema_migrations });
    // simulator_fingerprint_key: the one key 0040 makes for the deployment, not data.
    for (const t of Object.keys(after).filter((t) => !(t in countsBefore))) expect(after[t], t).toBe(t === 'simulator_fingerprint_key' ? 1 : 0);
    expect(before.events).toHaveLength(42); // the seeded 41 and the one written during 0025

    const plan = await sql<{ name: string; cutover: Date; partitions_from: Date }[]>`select name, cutover, partitions_from from partitioned_tables`;
    const parts = await partitions(sql);
    for (const p of plan) {
      expect(p.partitions_from).toEqual(p.cutover);
      expect(p.cutover.getTime()).toBeGreaterThan(Date.now() + 2 * DAY - HOUR);
      const legacy = parts.find((x) => x.partition === `${p.name}_legacy`);
      expect(legacy, p.name).toMatchObject({ parent: p.name, lower_at: null, upper_at: p.cutover });
      // Every row is in the legacy partition, none was moved.
      const [row] = await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from only ${p.name}_legacy`);
      expect(row!.n, p.name).toBe(before[p.name]!.length);
    }
    // The legacy table's foreign key to accounts became the partition's (no second one to validate).
    const [fk] = await sql`select conparentid <> 0 as attached from pg_constraint where conrelid = 'events_legacy'::regclass and contype = 'f'`;
    expect(fk!.attached).toBe(true);
    // Nothing points at the bounded tables any more.
    expect(await sql`select conname from pg_constraint where contype = 'f' and confrelid = any(array['events', 'webhook_deliveries', 'events_legacy', 'webhook_deliveries_legacy']::regclass[])`).toEqual([]);
  });

  it('when the SQL functions and src/lib/ids.ts compute bounds, then they agree', async () => {
    for (const ms of [0, 1_700_000_000_000, Date.now(), 2_000_000_000_123]) {
      const [r] = await sql<{ floor: string; time: Date }[]>`select id_floor('evt', to_timestamp(${ms / 1000})) as floor, id_time(${idFloor('wd', ms)}) as time`;
      expect(r!.floor).toBe(idFloor('evt', ms));
      expect(r!.time.getTime()).toBe(ms);
    }
  });

  it('when the service runs on the converted database, then lists, lookups, deliveries with attempts, resend, emails, idempotency and Stripe dedupe work on the legacy rows', async () => {
    await sql.end(); // a database is cloned only while nobody else is connected to it
    t = await startTestServer({ template: name });
    const key = await t.key(accountId, 'test');

    const list = await t.request('GET', '/v1/events?limit=100', { key });
    expect(list.status).toBe(200);
    const listed = list.body.data.map((e: { id: string }) => e.id);
    expect(listed.slice(1)).toEqual([...seeded.events].reverse().concat(seeded.shortEvent)); // newest (written during 0025) first
    const page2 = await t.request('GET', `/v1/events?limit=5&starting_after=${seeded.events[10]}`, { key });
    expect(page2.body.data.map((e: { id: string }) => e.id)).toEqual(seeded.events.slice(5, 10).reverse());

    const short = await t.request('GET', `/v1/events/${seeded.shortEvent}`, { key });
    expect(short.status).toBe(200);
    expect(short.body.data.object.id).toBe('pay_0');
    const deliveries = await t.request('GET', `/v1/events/${seeded.events[3]}/deliveries`, { key });
    expect(deliveries.body.data).toHaveLength(1);
    expect(deliveries.body.data[0]).toMatchObject({ id: seeded.deliveries[4], status: 'SUCCEEDED' });
    expect(deliveries.body.data[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200]);

    const resent = await t.request('POST', `/v1/events/${seeded.events[3]}/resend`, { key, body: {} });
    expect(resent.status).toBe(200);
    expect((await t.request('GET', `/v1/events/${seeded.events[3]}/deliveries`, { key })).body.data).toHaveLength(2);

    const emails = await t.request('GET', '/v1/emails?limit=100', { key });
    expect(emails.body.data).toHaveLength(41);

    // The stored answer of a key made before the conversion is replayed; an expired one is claimed again.
    const replay = await t.request('POST', '/v1/customers', { key, body: seeded.liveKey.body, headers: { 'idempotency-key': seeded.liveKey.key } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe('cus_fromthelegacykey');
    const fresh = await t.request('POST', '/v1/customers', { key, body: seeded.expiredKey.body, headers: { 'idempotency-key': seeded.expiredKey.key } });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.id).not.toBe('cus_expired');
    const again = await t.request('POST', '/v1/customers', { key, body: seeded.expiredKey.body, headers: { 'idempotency-key': seeded.expiredKey.key } });
    expect(again.body.id).toBe(fresh.body.id);

    // A dedupe key and a Stripe event id recorded before the conversion still count.
    const owner = { accountId, livemode: false };
    const dup = await t.sql.begin((tx) =>
      insertEmail(tx, owner, { to_address: 'payer@example.com', template: 'receipt', subject: 'Receipt', text_body: 't', html_body: 'h', related_object: 'pay_0', dedupe_key: seeded.emailDedupe }),
    );
    expect(dup).toBeUndefined();
    expect(await isHandled(t.sql, seeded.stripeEvent)).toBe(true);
    expect(await markHandled(t.sql, seeded.stripeEvent, 'charge.refunded', false)).toBe(false);
  });

  it('when the cutover is past retention, then each legacy partition is dropped whole with its table and the indexes it could not share become valid', async () => {
    const [plan] = await t!.sql<{ cutover: Date }[]>`select max(cutover) as cutover from partitioned_tables`;
    const report = await runRetention({ sql: t!.sql, config: t!.s.config, log: pino({ level: 'silent' }) }, new Date(plan!.cutover.getTime() + 31 * DAY));
    expect(report.dropped).toEqual(
      expect.arrayContaining(['events_legacy', 'webhook_deliveries_legacy', 'webhook_attempts_legacy', 'processor_events_legacy', 'idempotency_keys_legacy']),
    );
    expect(report.dropped).not.toContain('emails_legacy'); // 180 days
    const invalid = await t!.sql`select indexrelid::regclass::text as name from pg_index where not indisvalid and indrelid = any(${BOUNDED}::regclass[]) order by 1`;
    expect(invalid.map((r) => r.name)).toEqual(['emails_dedupe']);
    expect((await t!.request('GET', `/v1/events/${seeded.events[0]}`, { key: await t!.key(accountId, 'test') })).status).toBe(404);
  });
});
