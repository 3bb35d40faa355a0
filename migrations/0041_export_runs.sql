-- Issue 27, point 2: long exports run as a job (docs/exports.md, "Export runs"). An export run is
-- a row; its CSV is stored in Postgres, in chunks of about 1 MB, so that it survives a worker's
-- restart and any web process can serve it, with no shared disk. Runs and their chunks are deleted
-- EXPORT_RETENTION_DAYS after creation by the retention job (src/retention).

create table export_runs (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  dataset text not null,
  -- The validated query of the export (created_gte, created_lt, status, customer).
  filters jsonb not null default '{}',
  status text not null default 'PENDING' check (status in ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
  -- The current attempt: a fresh token each time the job starts; chunks of another attempt are never read.
  run_token text,
  attempts integer not null default 0,
  row_count bigint,
  byte_count bigint,
  failure_message text,
  -- Signs the download links of this run (HMAC key): a link names the run and its expiry only.
  link_key bytea not null,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz,
  expires_at timestamptz not null
);

-- The dashboard's list and the API's, newest first, within an account and mode.
create index export_runs_owner on export_runs (account_id, livemode, id);
-- The reconciler's pass over the runs not finished yet.
create index export_runs_unfinished on export_runs (id) where status in ('PENDING', 'RUNNING');
-- The retention's pass over the runs past their expiry.
create index export_runs_expiry on export_runs (expires_at);

create table export_chunks (
  export_run_id text collate "C" not null references export_runs (id) on delete cascade,
  run_token text not null,
  seq integer not null,
  data bytea not null,
  primary key (export_run_id, run_token, seq)
);
