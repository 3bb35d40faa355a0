-- Issue 23: what each repair pass did last (workers/reconcile.ts through src/repair/guard.ts), read
-- by every process's /readyz and /metrics. One row per pass, upserted at the end of each run.
create table repair_pass_status (
  pass text collate "C" primary key,
  last_started_at timestamptz not null,
  last_finished_at timestamptz not null,
  last_outcome text not null check (last_outcome in ('success', 'failure', 'timeout')),
  last_success_at timestamptz,
  last_failure_at timestamptz,
  -- The error of the last failure, cut to 500 characters: for operators (psql), never in an answer.
  last_error text,
  last_duration_ms integer not null,
  last_repaired integer,
  consecutive_failures integer not null default 0
);

-- The age of the oldest PENDING delivery, read at every metrics scrape: only PENDING rows are in it.
-- On a large table, build it first with `create index concurrently if not exists` (docs/operations.md).
create index if not exists webhook_deliveries_pending_created on webhook_deliveries (created_at) where status = 'PENDING';
