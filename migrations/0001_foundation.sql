-- Accounts, API keys, customers, idempotency keys and the events outbox.
-- Ids are time-ordered text compared byte-wise (collate "C"), so `order by id` is creation order.

create table accounts (
  id text collate "C" primary key,
  created_at timestamptz not null default now()
);

create table api_keys (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id) on delete cascade,
  livemode boolean not null,
  key_hash bytea not null unique, -- sha256 of the whole secret key; the key itself is never stored
  last4 text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_account on api_keys (account_id);

create table customers (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  email text not null,
  first_name text not null default '',
  last_name text not null default '',
  phone text,
  company_name text,
  notes text,
  metadata jsonb not null default '{}',
  processor_customer_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index customers_page on customers (account_id, livemode, id);
create index customers_email_page on customers (account_id, livemode, email, id);

create table idempotency_keys (
  account_id text collate "C" not null,
  livemode boolean not null,
  key text not null,
  fingerprint text not null, -- sha256 of method, path and canonical body
  locked_at timestamptz,     -- set while the first request runs
  status integer,            -- null until the first request has answered
  response jsonb,
  request_id text not null,
  created_at timestamptz not null default now(),
  primary key (account_id, livemode, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

create table events (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  type text not null,
  api_version text not null,
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index events_page on events (account_id, livemode, id);
create index events_type_page on events (account_id, livemode, type, id);
