-- Checkout sessions, the payments made on them, and the secret that signs hosted-page CSRF tokens.
-- customer_id and payment_link_id are plain references (no foreign key): a deleted customer keeps
-- its sessions and payments, as Stripe keeps the id on them; 0004 (payment links) adds its own key.

create table checkout_sessions (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  status text not null default 'OPEN' check (status in ('OPEN', 'COMPLETE', 'EXPIRED')),
  payment_status text not null default 'unpaid' check (payment_status in ('unpaid', 'paid', 'no_payment_required')),
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  success_url text not null,
  cancel_url text,
  customer_id text collate "C",
  customer_email text,
  line_items jsonb,
  description text,
  metadata jsonb not null default '{}',
  payment_intent_id text collate "C",
  payment_id text collate "C",
  payment_link_id text collate "C",
  link_source text,             -- DIRECT / EMBED / WHATSAPP / QR when opened through a payment link
  expires_at timestamptz not null,
  completed_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index checkout_sessions_page on checkout_sessions (account_id, livemode, id);
create index checkout_sessions_status_page on checkout_sessions (account_id, livemode, status, id);
create index checkout_sessions_customer_page on checkout_sessions (account_id, livemode, customer_id, id);
-- The reconciler and expire-on-read look for OPEN sessions past expires_at: a small, hot set.
create index checkout_sessions_open_expiry on checkout_sessions (expires_at) where status = 'OPEN';

create table payments (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  status text not null default 'PENDING' check (status in ('PENDING', 'SUCCEEDED', 'FAILED')),
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  checkout_session_id text collate "C" references checkout_sessions (id),
  payment_intent_id text collate "C",
  customer_id text collate "C",
  email text,
  billing_name text,
  card_brand text,               -- only the brand and the last four digits of a card are ever stored
  card_last4 text,
  next_action text,              -- 'three_d_secure' while a challenge is pending
  failure_code text,
  failure_message text,
  description text,
  payment_link_id text collate "C",
  link_source text,
  succeeded_at timestamptz,
  failed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index payments_page on payments (account_id, livemode, id);
create index payments_status_page on payments (account_id, livemode, status, id);
create index payments_customer_page on payments (account_id, livemode, customer_id, id);
create index payments_session on payments (checkout_session_id);

-- Deployment-wide secrets generated once, shared by every web process (hosted-page CSRF tokens).
-- gen_random_uuid() draws from the server's strong random source: two of them give 244 random bits.
create table service_secrets (
  name text primary key,
  value bytea not null,
  created_at timestamptz not null default now()
);
insert into service_secrets (name, value)
values ('csrf', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
