import type { Sql, TxSql } from '../db/sql.ts';
import type { Owner } from '../lib/owner.ts';
import type { DayRow, Interval } from './buckets.ts';

/**
 * The reports' rollups (migration 0039): one row per account, mode, currency and UTC day, and one
 * per failure code. Kept by the statements below, each called in the transaction of the state
 * change it counts, right after the conditional update that makes the change (so it runs once per
 * change, and a rolled-back change takes its count with it). Each is one `insert … on conflict do
 * update` adding to the row: concurrent transactions queue on the row lock and every increment
 * lands (test/reports/race.test.ts). A day is the UTC date of the change's own timestamp, the
 * column the migration's backfill reads too.
 */

/** What a payment's outcome needs of its row (PaymentRow has more). */
export interface PaymentOutcome {
  account_id: string;
  livemode: boolean;
  currency: string;
  amount_cents: number | string;
  status: string;
  failure_code: string | null;
  succeeded_at: Date | null;
  failed_at: Date | null;
}

/** Payments that just moved to SUCCEEDED or FAILED (one or a batch: expiry fails abandoned attempts of many sessions). */
export async function countPaymentOutcomes(sql: TxSql, rows: readonly PaymentOutcome[]): Promise<void> {
  const done = rows.filter((r) => (r.status === 'SUCCEEDED' && r.succeeded_at) || (r.status === 'FAILED' && r.failed_at));
  if (!done.length) return;
  // Sorted by the rollup's key, so two batches lock the rows in the same order. Arrays of booleans and
  // dates go as text (postgres.js sends them as one value otherwise).
  const keyed = done
    .map((r) => ({ r, at: (r.status === 'SUCCEEDED' ? r.succeeded_at : r.failed_at)! }))
    .sort((a, b) => cmp(`${a.r.account_id}|${a.r.livemode}|${a.r.currency}|${a.at.toISOString()}`, `${b.r.account_id}|${b.r.livemode}|${b.r.currency}|${b.at.toISOString()}`));
  const col = <T>(f: (x: (typeof keyed)[number]) => T) => keyed.map(f);
  await sql`
    insert into report_daily as d (account_id, livemode, currency, day, gross_cents, succeeded_count, failed_count)
    select account_id, livemode, currency, (at at time zone 'utc')::date, sum(gross), sum(ok), sum(failed)
    from unnest(${col((x) => x.r.account_id)}::text[], ${col((x) => String(x.r.livemode))}::boolean[], ${col((x) => x.r.currency)}::text[],
      ${col((x) => x.at.toISOString())}::timestamptz[], ${col((x) => (x.r.status === 'SUCCEEDED' ? Number(x.r.amount_cents) : 0))}::bigint[],
      ${col((x) => (x.r.status === 'SUCCEEDED' ? 1 : 0))}::int[], ${col((x) => (x.r.status === 'FAILED' ? 1 : 0))}::int[])
      as t (account_id, livemode, currency, at, gross, ok, failed)
    group by 1, 2, 3, 4
    order by 1, 2, 3, 4
    on conflict (account_id, livemode, currency, day) do update set
      gross_cents = d.gross_cents + excluded.gross_cents,
      succeeded_count = d.succeeded_count + excluded.succeeded_count,
      failed_count = d.failed_count + excluded.failed_count`;
  const failed = keyed.filter((x) => x.r.status === 'FAILED');
  if (!failed.length) return;
  const fcol = <T>(f: (x: (typeof keyed)[number]) => T) => failed.map(f);
  await sql`
    insert into report_declines as d (account_id, livemode, currency, day, code, count)
    select account_id, livemode, currency, (at at time zone 'utc')::date, code, count(*)
    from unnest(${fcol((x) => x.r.account_id)}::text[], ${fcol((x) => String(x.r.livemode))}::boolean[], ${fcol((x) => x.r.currency)}::text[],
      ${fcol((x) => x.at.toISOString())}::timestamptz[], ${fcol((x) => x.r.failure_code ?? 'unknown')}::text[])
      as t (account_id, livemode, currency, at, code)
    group by 1, 2, 3, 4, 5
    order by 1, 2, 3, 4, 5
    on conflict (account_id, livemode, currency, day, code) do update set count = d.count + excluded.count`;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A refund that just SUCCEEDED, dated by its `updated_at` (the settle's now()). */
export async function countRefund(sql: TxSql, r: { account_id: string; livemode: boolean; currency: string; amount_cents: number | string; updated_at: Date }): Promise<void> {
  await sql`
    insert into report_daily as d (account_id, livemode, currency, day, refunded_cents, refund_count)
    values (${r.account_id}, ${r.livemode}, ${r.currency}, (${r.updated_at}::timestamptz at time zone 'utc')::date, ${Number(r.amount_cents)}, 1)
    on conflict (account_id, livemode, currency, day) do update set
      refunded_cents = d.refunded_cents + excluded.refunded_cents, refund_count = d.refund_count + 1`;
}

interface DisputeFigures {
  account_id: string;
  livemode: boolean;
  currency: string;
  amount_cents: number | string;
  status: string;
  created_at: Date;
  closed_at: Date | null;
}

/** A dispute just recorded, dated by its `created_at`. */
export async function countDisputeOpened(sql: TxSql, d: DisputeFigures): Promise<void> {
  await sql`
    insert into report_daily as r (account_id, livemode, currency, day, disputed_cents, dispute_count)
    values (${d.account_id}, ${d.livemode}, ${d.currency}, (${d.created_at}::timestamptz at time zone 'utc')::date, ${Number(d.amount_cents)}, 1)
    on conflict (account_id, livemode, currency, day) do update set
      disputed_cents = r.disputed_cents + excluded.disputed_cents, dispute_count = r.dispute_count + 1`;
}

/** A dispute just decided (WON or LOST), dated by its `closed_at`; anything else counts nothing. */
export async function countDisputeClosed(sql: TxSql, d: DisputeFigures): Promise<void> {
  if ((d.status !== 'WON' && d.status !== 'LOST') || !d.closed_at) return;
  const won = d.status === 'WON';
  const amount = Number(d.amount_cents);
  await sql`
    insert into report_daily as r (account_id, livemode, currency, day, dispute_won_cents, dispute_won_count, dispute_lost_cents, dispute_lost_count)
    values (${d.account_id}, ${d.livemode}, ${d.currency}, (${d.closed_at}::timestamptz at time zone 'utc')::date,
      ${won ? amount : 0}, ${won ? 1 : 0}, ${won ? 0 : amount}, ${won ? 0 : 1})
    on conflict (account_id, livemode, currency, day) do update set
      dispute_won_cents = r.dispute_won_cents + excluded.dispute_won_cents, dispute_won_count = r.dispute_won_count + excluded.dispute_won_count,
      dispute_lost_cents = r.dispute_lost_cents + excluded.dispute_lost_cents, dispute_lost_count = r.dispute_lost_count + excluded.dispute_lost_count`;
}

/**
 * The rollup rows of one account and mode from `from` to `to` (days included), of one currency or
 * all, summed per period in SQL: one row per currency and period, dated by the period's first day
 * within the range (`greatest(period start, from)`, so a partial first period is still inside it;
 * `rollUp` puts each row in the period that holds its day). A year by week is some 160 rows rather
 * than 1,100 daily ones (the reports page's SQL; docs/decisions.md, "Issue 27: search and reports at
 * a million"). Postgres's week starts on Monday, as buckets.ts's does.
 */
export async function periodRows(sql: Sql, o: Owner, from: string, to: string, currency: string | undefined, interval: Interval = 'day'): Promise<DayRow[]> {
  const start = interval === 'day' ? sql`day` : sql`greatest(date_trunc(${interval}, day::timestamp)::date, ${from}::date)`;
  return sql<DayRow[]>`
    select currency, to_char(${start}, 'YYYY-MM-DD') as day,
      sum(gross_cents)::float8 as gross_cents, sum(succeeded_count)::float8 as succeeded_count, sum(failed_count)::float8 as failed_count,
      sum(refunded_cents)::float8 as refunded_cents, sum(refund_count)::float8 as refund_count,
      sum(disputed_cents)::float8 as disputed_cents, sum(dispute_count)::float8 as dispute_count,
      sum(dispute_won_cents)::float8 as dispute_won_cents, sum(dispute_won_count)::float8 as dispute_won_count,
      sum(dispute_lost_cents)::float8 as dispute_lost_cents, sum(dispute_lost_count)::float8 as dispute_lost_count
    from report_daily
    where account_id = ${o.accountId} and livemode = ${o.livemode} and day between ${from}::date and ${to}::date
      ${currency !== undefined ? sql`and currency = ${currency}` : sql``}
    group by 1, 2
    order by 1, 2`;
}

export interface DeclineRow {
  currency: string;
  code: string;
  count: number;
}

/** The most frequent failure codes of the range, per currency (at most `limit` each), most first. */
export async function topDeclines(sql: Sql, o: Owner, from: string, to: string, currency: string | undefined, limit: number): Promise<DeclineRow[]> {
  return sql<DeclineRow[]>`
    select currency, code, n::float8 as count from (
      select currency, code, sum(count) as n, row_number() over (partition by currency order by sum(count) desc, code) as rank
      from report_declines
      where account_id = ${o.accountId} and livemode = ${o.livemode} and day between ${from}::date and ${to}::date
        ${currency !== undefined ? sql`and currency = ${currency}` : sql``}
      group by currency, code
    ) t
    where rank <= ${limit}
    order by currency, rank`;
}

/** The currencies the account has figures in, in this mode (the page's currency choice). */
export async function reportCurrencies(sql: Sql, o: Owner): Promise<string[]> {
  const rows = await sql<{ currency: string }[]>`
    select distinct currency from report_daily where account_id = ${o.accountId} and livemode = ${o.livemode} order by currency`;
  return rows.map((r) => r.currency);
}

/**
 * The rollups of one account recomputed from its payments, refunds and disputes with the dating
 * rules of the hooks above (migration 0039's backfill, for one account): for a repair after a
 * change made without the hooks (a rolling deploy's old process, a manual fix), and for the tests
 * that prove the hooks and the backfill agree. Takes the account's rows whole: run it off-peak.
 */
export async function rebuildReports(sql: TxSql, accountId: string): Promise<void> {
  await sql`delete from report_daily where account_id = ${accountId}`;
  await sql`delete from report_declines where account_id = ${accountId}`;
  await sql`
    insert into report_daily (account_id, livemode, currency, day, gross_cents, succeeded_count, failed_count,
      refunded_cents, refund_count, disputed_cents, dispute_count, dispute_won_cents, dispute_won_count,
      dispute_lost_cents, dispute_lost_count)
    select account_id, livemode, currency, day, sum(gross), sum(ok), sum(failed), sum(refunded), sum(refunds), sum(disputed),
      sum(disputes), sum(won_cents), sum(won), sum(lost_cents), sum(lost)
    from (
      select account_id, livemode, currency, (succeeded_at at time zone 'utc')::date as day, amount_cents as gross, 1 as ok, 0 as failed,
        0 as refunded, 0 as refunds, 0 as disputed, 0 as disputes, 0 as won_cents, 0 as won, 0 as lost_cents, 0 as lost
      from payments where account_id = ${accountId} and status = 'SUCCEEDED' and succeeded_at is not null
      union all
      select account_id, livemode, currency, (failed_at at time zone 'utc')::date, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0
      from payments where account_id = ${accountId} and status = 'FAILED' and failed_at is not null
      union all
      select account_id, livemode, currency, (updated_at at time zone 'utc')::date, 0, 0, 0, amount_cents, 1, 0, 0, 0, 0, 0, 0
      from refunds where account_id = ${accountId} and status = 'SUCCEEDED'
      union all
      select account_id, livemode, currency, (created_at at time zone 'utc')::date, 0, 0, 0, 0, 0, amount_cents, 1, 0, 0, 0, 0
      from disputes where account_id = ${accountId}
      union all
      select account_id, livemode, currency, (closed_at at time zone 'utc')::date, 0, 0, 0, 0, 0, 0, 0,
        case when status = 'WON' then amount_cents else 0 end, case when status = 'WON' then 1 else 0 end,
        case when status = 'LOST' then amount_cents else 0 end, case when status = 'LOST' then 1 else 0 end
      from disputes where account_id = ${accountId} and status in ('WON', 'LOST') and closed_at is not null
    ) changes
    group by account_id, livemode, currency, day`;
  await sql`
    insert into report_declines (account_id, livemode, currency, day, code, count)
    select account_id, livemode, currency, (failed_at at time zone 'utc')::date, coalesce(failure_code, 'unknown'), count(*)
    from payments where account_id = ${accountId} and status = 'FAILED' and failed_at is not null
    group by 1, 2, 3, 4, 5`;
}
