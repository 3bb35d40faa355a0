import pino from 'pino';
import type postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../src/db/sql.ts';
import { jobRun, runDelivery } from '../../src/webhooks/deliver.ts';
import { runRetention, ensurePartitions, retainedTables, DDL_LOCK_TIMEOUT, type RetentionReport } from '../../src/retention/service.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { BOUNDED, DAY, covers, dayStart, idAt, otherTableCounts, partitions, relations, type PartitionRow } from './helpers.ts';
import { DIGITS } from '../helpers/cards.ts';

const t = useTestServer();
const quiet = pino({ level: 'silent' });

/** A second pool on the same database: another worker process. */
const otherProcess = () => connect(t.s.config.databaseUrl, 4);

/** A transaction of another process that runs `first` and stays open (with its locks) until released. */
async function openTransaction(first: (tx: postgres.TransactionSql) => Promise<unknown>): Promise<{ release(): Promise<void> }> {
  const other = otherProcess();
  let release!: () => void;
  let opened!: () => void;
  const open = new Promise<void>((r) => (opened = r));
  const tx = other.begin(async (q) => {
    await first(q);
    opened();
    await new Promise<void>((r) => (release = r));
  });
  await open;
  return {
    async release() {
      release();
      await tx;
      await other.end();
    },
  };
}

/** A payment through the API: rows in the money tables, an event, a delivery, a receipt email. */
async function paidSession(key: string): Promise<void> {
  const session = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 1500, currency: 'usd', success_url: 'https://example.com/ok' } });
  expect(session.status).toBe(200);
  const paid = await t.request('POST', `/v1/test-helpers/checkout/sessions/${session.body.id}/pay`, {
    key,
    body: { card: DIGITS.visa, email: 'payer@example.com' },
  });
  expect(paid.status).toBe(200);
}

/** One row in each bounded table at the moment `ms` (an event with its delivery, its attempt, an email…). */
async function rowsAt(sql: Sql, accountId: string, ms: number): Promise<{ event: string; delivery: string; email: string; stripe: string; key: string }> {
  const at = new Date(ms);
  const event = idAt('evt', ms);
  const delivery = idAt('wd', ms);
  const email = idAt('em', ms);
  const stripe = `evt_stripe_${ms}_${Math.random().toString(36).slice(2)}`;
  const key = `key-${ms}-${Math.random().toString(36).slice(2)}`;
  await sql.begin(async (tx) => {
    await tx`insert into events (id, account_id, livemode, type, api_version, data, created_at) values (${event}, ${accountId}, false, 'payment.succeeded', '2026-11-01', '{"object":{}}', ${at})`;
    await tx`insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, created_at) values (${delivery}, ${accountId}, false, ${event}, 'we_none', 'SUCCEEDED', ${at})`;
    await tx`insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code) values (${delivery}, 1, ${at}, 12, 200)`;
    await tx`insert into emails (id, account_id, livemode, to_address, template, subject, text_body, html_body, status, created_at)
             values (${email}, ${accountId}, false, 'a@example.com', 'receipt', 'Receipt', 'text', '<p>html</p>', 'SENT', ${at})`;
    await tx`insert into processor_events (id, type, livemode, received_at) values (${stripe}, 'charge.refunded', false, ${at})`;
    await tx`insert into idempotency_keys (account_id, livemode, key, fingerprint, request_id, created_at) values (${accountId}, false, ${key}, 'fp', 'req_1', ${at})`;
  });
  return { event, delivery, email, stripe, key };
}

async function exists(sql: Sql, rows: Awaited<ReturnType<typeof rowsAt>>): Promise<Record<string, boolean>> {
  const one = async (q: PromiseLike<readonly unknown[]>) => (await q).length === 1;
  return {
    event: await one(sql`select 1 from events where id = ${rows.event}`),
    delivery: await one(sql`select 1 from webhook_deliveries where id = ${rows.delivery}`),
    attempt: await one(sql`select 1 from webhook_attempts where delivery_id = ${rows.delivery}`),
    email: await one(sql`select 1 from emails where id = ${rows.email}`),
    stripe: await one(sql`select 1 from processor_events where id = ${rows.stripe}`),
    key: await one(sql`select 1 from idempotency_keys where key = ${rows.key}`),
  };
}

/** The partitions a run at `now` must drop: those whose whole range is past their table's retention. */
async function expiredAt(server: TestServer, now: number): Promise<string[]> {
  const keep = new Map(retainedTables(server.s.config.retention).map((r) => [r.name, r.keepMs]));
  return (await partitions(server.sql)).filter((p) => p.upper_at !== null && p.upper_at.getTime() <= now - keep.get(p.parent)!).map((p) => p.partition);
}

const sorted = (xs: readonly string[]) => [...xs].sort();

/** Which table each row of `rowsAt` is in. */
const TABLE_OF = { event: 'events', delivery: 'webhook_deliveries', attempt: 'webhook_attempts', email: 'emails', stripe: 'processor_events', key: 'idempotency_keys' };

/** The partition of `table` that holds the moment `ms`. */
function partitionOf(parts: readonly PartitionRow[], table: string, ms: number): string {
  const p = parts.find((x) => x.parent === table && (x.lower_at === null || x.lower_at.getTime() <= ms) && x.upper_at !== null && ms < x.upper_at.getTime());
  if (!p) throw new Error(`no partition of ${table} at ${new Date(ms).toISOString()}`);
  return p.partition;
}

describe('partitions ahead', () => {
  it('when a run looks ahead, then every bounded table has a partition for every moment up to RETENTION_PARTITIONS_AHEAD_DAYS ahead, an insert there finds it, and a second run makes none', async () => {
    const { accountId } = await t.account();
    const now = Date.now() + 3 * DAY; // the job runs three days from now
    const ahead = t.s.config.retention.partitionsAheadDays * DAY;
    const report = await runRetention(t.s, new Date(now));
    expect(report.created.length).toBeGreaterThan(0);
    expect(report.busy).toEqual([]);

    const parts = await partitions(t.sql);
    for (const table of BOUNDED) {
      for (let ms = now; ms < now + ahead; ms += 3600_000) expect(covers(parts, table, ms), `${table} at ${new Date(ms).toISOString()}`).toBe(true);
    }
    // Rows made on the last day ahead land in their partitions.
    const last = await rowsAt(t.sql, accountId, now + ahead - 3600_000);
    expect(await exists(t.sql, last)).toEqual({ event: true, delivery: true, attempt: true, email: true, stripe: true, key: true });

    const again = await runRetention(t.s, new Date(now));
    expect(again).toEqual({ created: [], dropped: [], busy: [], deferred: [], exportRuns: 0 });
  });

  it('when the partitions ahead are missing (no run for weeks), then the start-up pass makes them again', async () => {
    const day10 = dayStart(Date.now()) + 10 * DAY;
    const [before] = (await partitions(t.sql, 'events')).filter((p) => p.lower_at?.getTime() === day10);
    expect(before).toBeDefined();
    await t.sql`drop table ${t.sql(before!.partition)}`;
    expect(covers(await partitions(t.sql), 'events', day10 + 1000)).toBe(false);

    const report = await ensurePartitions({ sql: t.sql, config: t.s.config, log: quiet }, new Date());
    // (The earlier run, three days ahead of the clock, dropped today's idempotency keys: they come back too.)
    expect(report.created.filter((p) => p.startsWith('events_'))).toEqual([before!.partition]);
    expect(covers(await partitions(t.sql), 'events', day10 + 1000)).toBe(true);
  });
});

describe('dropping past retention', () => {
  it('when partitions are wholly past their retention, then a run drops exactly those, with their rows, and no other table or row changes', async () => {
    const { accountId, test } = await t.account();
    await paidSession(test); // money rows, now
    const today = dayStart(Date.now());
    const old = await rowsAt(t.sql, accountId, today + 3600_000); // today's partitions
    const kept = await rowsAt(t.sql, accountId, today + DAY + 3600_000); // tomorrow's
    // A resend of today's event made tomorrow, still waiting for its retry.
    const late = idAt('wd', today + DAY + 2 * 3600_000);
    await t.sql`insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, attempt_count, next_attempt_at)
                values (${late}, ${accountId}, false, ${old.event}, 'we_none', 'PENDING', 1, now())`;

    // 30 days and a half after tomorrow began: today's events partition is past 30 days, tomorrow's is not.
    const now = today + DAY + 30 * DAY + DAY / 2;
    const expected = await expiredAt(t, now);
    const partitionsBefore = partitions(t.sql);
    const relationsBefore = await relations(t.sql);
    const countsBefore = await otherTableCounts(t.sql);

    // prom-client answers its live values: summed at once.
    const droppedSoFar = async () => (await t.s.metrics.partitionsDropped.get()).values.reduce((n, v) => n + v.value, 0);
    const droppedBefore = await droppedSoFar();
    const report = await runRetention(t.s, new Date(now));
    expect(sorted(report.dropped)).toEqual(sorted(expected));
    // Each drop is counted under its table (retention_partitions_dropped_total).
    const counted = (await droppedSoFar()) - droppedBefore;
    expect(counted).toBe(expected.length);
    expect(report.dropped).toContain(`events_p${new Date(today).toISOString().slice(0, 10).replaceAll('-', '')}`);
    expect(report.deferred).toEqual([]);

    // Each row went with its partition when that one was due, and only then: today's event, delivery
    // and attempt (30 days) and idempotency key (24 hours) are gone, the email (180 days) is kept,
    // tomorrow's event is kept.
    const parts = await partitionsBefore;
    const alive = (ms: number) => Object.fromEntries(Object.entries(TABLE_OF).map(([row, table]) => [row, !expected.includes(partitionOf(parts, table, ms))]));
    expect(await exists(t.sql, old)).toEqual(alive(today + 3600_000));
    expect(await exists(t.sql, kept)).toEqual(alive(today + DAY + 3600_000));
    expect(alive(today + 3600_000)).toMatchObject({ event: false, delivery: false, attempt: false, email: true, key: false });
    expect(alive(today + DAY + 3600_000)).toMatchObject({ event: true, delivery: true, attempt: true, email: true });
    // Nothing but those partitions is gone (the run made the ones ahead of its time); every other
    // table (payments, refunds, invoices, plans…) has all its rows.
    expect(await relations(t.sql)).toEqual(sorted([...relationsBefore.filter((r) => !expected.includes(r)), ...report.created]));
    expect(await otherTableCounts(t.sql)).toEqual(countsBefore);
    expect(countsBefore.payments).toBeGreaterThan(0);
    // Only the bounded tables are ever partitioned or dropped.
    expect(sorted((await t.sql`select name from partitioned_tables`).map((r) => r.name as string))).toEqual(sorted(BOUNDED));

    expect(await runRetention(t.s, new Date(now))).toMatchObject({ created: [], dropped: [] });

    // The late delivery outlived its event: its job ends it rather than sending nothing for ever.
    expect(await runDelivery(t.s, jobRun(t.s, { data: { deliveryId: late }, attemptsMade: 0, opts: {} } as never))).toBe('cancelled (its event is past retention)');
    const [row] = await t.sql`select status from webhook_deliveries where id = ${late}`;
    expect(row!.status).toBe('CANCELLED');
  });
});

describe('several runs', () => {
  it('when two runs start at once from two processes, then both finish, each partition is made or dropped by one of them, and the result is complete', async () => {
    const now = dayStart(Date.now()) + 75 * DAY;
    const expected = await expiredAt(t, now);
    expect(expected.length).toBeGreaterThan(0);
    const second = otherProcess();
    let a: RetentionReport;
    let b: RetentionReport;
    try {
      [a, b] = await Promise.all([runRetention(t.s, new Date(now)), runRetention({ sql: second, config: t.s.config, log: quiet }, new Date(now))]);
    } finally {
      await second.end();
    }
    expect(a.created.filter((p) => b.created.includes(p))).toEqual([]);
    expect(a.dropped.filter((p) => b.dropped.includes(p))).toEqual([]);
    expect(sorted([...a.dropped, ...b.dropped])).toEqual(sorted(expected));
    expect(await expiredAt(t, now)).toEqual([]);
    const parts = await partitions(t.sql);
    for (const table of BOUNDED) expect(covers(parts, table, now + DAY), table).toBe(true);
  });

  it('when another run holds a table, then this run leaves that table to it and does the others', async () => {
    const now = dayStart(Date.now()) + 120 * DAY;
    const expected = await expiredAt(t, now);
    const holder = await openTransaction((tx) => tx`select pg_advisory_xact_lock(hashtext('retention'), hashtext('events'))`);
    try {
      const report = await runRetention(t.s, new Date(now));
      expect(report.busy).toEqual(['events']);
      expect(report.dropped.some((p) => p.startsWith('events_'))).toBe(false);
      expect(sorted(report.dropped)).toEqual(sorted(expected.filter((p) => !p.startsWith('events_'))));
    } finally {
      await holder.release();
    }
    const next = await runRetention(t.s, new Date(now));
    expect(sorted(next.dropped)).toEqual(sorted(expected.filter((p) => p.startsWith('events_'))));
  });

  it(`when a long transaction reads a table, then its drop gives up after ${DDL_LOCK_TIMEOUT} without blocking the others, and the next run drops it`, async () => {
    const now = dayStart(Date.now()) + 200 * DAY;
    const expected = await expiredAt(t, now);
    // ACCESS SHARE on emails and its partitions until released.
    const reader = await openTransaction((tx) => tx`select count(*) from emails`);
    try {
      const report = await runRetention(t.s, new Date(now));
      const emails = expected.filter((p) => p.startsWith('emails_'));
      expect(emails.length).toBeGreaterThan(0);
      expect(sorted(report.deferred)).toEqual(sorted(emails));
      expect(sorted(report.dropped)).toEqual(sorted(expected.filter((p) => !p.startsWith('emails_'))));
    } finally {
      await reader.release();
    }
    const next = await runRetention(t.s, new Date(now));
    expect(sorted(next.dropped)).toEqual(sorted(expected.filter((p) => p.startsWith('emails_'))));
  });
});
