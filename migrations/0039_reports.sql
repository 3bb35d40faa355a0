-- Issue 27, point 3: reports (docs/reports.md). Rollups per account, mode, currency and UTC day,
-- kept by src/reports/store.ts in the same transaction as the state change that moves them (a
-- payment succeeded or failed, a refund succeeded, a dispute opened, won or lost), so the reports
-- page and GET /v1/reports/summary read a few hundred rows instead of scanning payments.
--
-- Each figure is dated by the moment of its change, as a UTC calendar day:
--   payments succeeded: succeeded_at; failed: failed_at; refunds: updated_at of the SUCCEEDED
--   refund (set by the settle, the row's last change); disputes opened: created_at; won or lost:
--   closed_at. The backfill below reads the same columns, so a rebuild gives the same rows.
-- The service has no fees: net = gross - refunded - disputes lost (docs/decisions.md).
-- Small by construction (one row per account, mode, currency and day with activity; one per
-- decline code and day): kept with the money records, no retention (docs/decisions.md).
create table report_daily (
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  currency text not null,
  day date not null,
  gross_cents bigint not null default 0,
  succeeded_count bigint not null default 0,
  failed_count bigint not null default 0,
  refunded_cents bigint not null default 0,
  refund_count bigint not null default 0,
  disputed_cents bigint not null default 0,
  dispute_count bigint not null default 0,
  dispute_won_cents bigint not null default 0,
  dispute_won_count bigint not null default 0,
  dispute_lost_cents bigint not null default 0,
  dispute_lost_count bigint not null default 0,
  primary key (account_id, livemode, currency, day)
);

-- Failed payments per failure code (card_declined, insufficient_funds, authentication_abandoned …).
create table report_declines (
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  currency text not null,
  day date not null,
  code text not null,
  count bigint not null default 0,
  primary key (account_id, livemode, currency, day, code)
);
create index report_declines_day on report_declines (account_id, livemode, day);

-- The backfill: every existing row, counted once, as the hooks would have counted it.
insert into report_daily (account_id, livemode, currency, day, gross_cents, succeeded_count, failed_count,
  refunded_cents, refund_count, disputed_cents, dispute_count, dispute_won_cents, dispute_won_count,
  dispute_lost_cents, dispute_lost_count)
select account_id, livemode, currency, day,
  sum(gross), sum(ok), sum(failed), sum(refunded), sum(refunds), sum(disputed), sum(disputes),
  sum(won_cents), sum(won), sum(lost_cents), sum(lost)
from (
  select account_id, livemode, currency, (succeeded_at at time zone 'utc')::date as day,
    amount_cents as gross, 1 as ok, 0 as failed, 0 as refunded, 0 as refunds, 0 as disputed, 0 as disputes,
    0 as won_cents, 0 as won, 0 as lost_cents, 0 as lost
  from payments where status = 'SUCCEEDED' and succeeded_at is not null
  union all
  select account_id, livemode, currency, (failed_at at time zone 'utc')::date, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0
  from payments where status = 'FAILED' and failed_at is not null
  union all
  select account_id, livemode, currency, (updated_at at time zone 'utc')::date, 0, 0, 0, amount_cents, 1, 0, 0, 0, 0, 0, 0
  from refunds where status = 'SUCCEEDED'
  union all
  select account_id, livemode, currency, (created_at at time zone 'utc')::date, 0, 0, 0, 0, 0, amount_cents, 1, 0, 0, 0, 0
  from disputes
  union all
  select account_id, livemode, currency, (closed_at at time zone 'utc')::date, 0, 0, 0, 0, 0, 0, 0,
    case when status = 'WON' then amount_cents else 0 end, case when status = 'WON' then 1 else 0 end,
    case when status = 'LOST' then amount_cents else 0 end, case when status = 'LOST' then 1 else 0 end
  from disputes where status in ('WON', 'LOST') and closed_at is not null
) changes
group by account_id, livemode, currency, day;

insert into report_declines (account_id, livemode, currency, day, code, count)
select account_id, livemode, currency, (failed_at at time zone 'utc')::date, coalesce(failure_code, 'unknown'), count(*)
from payments where status = 'FAILED' and failed_at is not null
group by 1, 2, 3, 4, 5;
