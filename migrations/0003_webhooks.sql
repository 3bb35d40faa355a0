-- Webhook endpoints, one delivery per (event, endpoint), and the log of every delivery attempt.

-- An event keeps the exact JSON text it was recorded with (json, not jsonb, which reorders keys),
-- so the webhook body and the events API show a resource's fields in its presenter's order.
alter table events alter column data type json using data::json;

create table webhook_endpoints (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  url text not null,
  description text,
  enabled_events text[] not null,
  is_active boolean not null default true,
  -- Kept in clear, unlike API keys: every attempt has to sign with it.
  secret text not null,
  -- The secret before the last rotation, still signing beside the new one until it expires.
  previous_secret text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_page on webhook_endpoints (account_id, livemode, id);

create table webhook_deliveries (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  event_id text collate "C" not null references events (id),
  -- No foreign key: a delivery's history outlives the endpoint it was for.
  endpoint_id text collate "C" not null,
  status text not null check (status in ('PENDING', 'SUCCEEDED', 'FAILED', 'PAUSED', 'CANCELLED')),
  attempt_count integer not null default 0,
  next_attempt_at timestamptz, -- while PENDING: when the next attempt is due (the reconciler's clock)
  last_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_deliveries_event on webhook_deliveries (event_id, id);
create index webhook_deliveries_endpoint_open on webhook_deliveries (endpoint_id) where status in ('PENDING', 'PAUSED');
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'PENDING';

create table webhook_attempts (
  delivery_id text collate "C" not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer not null,
  status_code integer,         -- null when no response came (refused address, timeout, connection error)
  error text,                  -- null on a 2xx
  response_body text,          -- the first 1 KB of the response body
  primary key (delivery_id, attempt)
);
