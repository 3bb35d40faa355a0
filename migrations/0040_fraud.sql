-- Issue 27, point 4: fraud rules, block lists and reviews (docs/fraud.md).

-- Rules of one account and mode: a structured condition list (src/fraud/schema.ts), all of which
-- must hold, and an action. Few per account: read whole on each evaluation.
create table fraud_rules (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  name text not null,
  action text not null check (action in ('allow', 'block', 'review')),
  conditions jsonb not null,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index fraud_rules_page on fraud_rules (account_id, livemode, id);

-- Block list entries: an email, a card fingerprint, a card country or a client address / network.
-- `network` holds the cidr of a client_ip entry (an address is a /32 or /128), matched with >>=.
create table fraud_list_items (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  kind text not null check (kind in ('email', 'card_fingerprint', 'card_country', 'client_ip')),
  value text not null,
  network cidr,
  note text,
  created_at timestamptz not null default now(),
  unique (account_id, livemode, kind, value)
);
create index fraud_list_items_page on fraud_list_items (account_id, livemode, id);

-- What the rules saw of an attempt and what they decided, kept on the payment.
alter table payments
  add column card_fingerprint text,
  add column card_country text,
  add column client_ip inet,
  add column fraud_action text check (fraud_action in ('allow', 'block', 'review')),
  add column fraud_rule_id text collate "C",
  add column fraud_reason text,
  -- open (held, authorised not captured), approving / refusing (the processor being asked), approved, refused, expired.
  add column review_status text check (review_status in ('open', 'approving', 'refusing', 'approved', 'refused', 'expired')),
  add column review_deadline timestamptz,
  add column review_closed_at timestamptz,
  add column review_closed_by text;

-- Velocity: attempts of one card or one client address within a window, per account and mode.
create index payments_fraud_card on payments (account_id, livemode, card_fingerprint, created_at) where card_fingerprint is not null;
create index payments_fraud_ip on payments (account_id, livemode, client_ip, created_at) where client_ip is not null;
-- The review sweeper and the dashboard's queue of open reviews.
create index payments_review_open on payments (review_deadline) where review_status in ('open', 'approving', 'refusing');

-- The simulator's manual capture: a review's attempt is authorised, then captured or voided.
alter table simulator_attempts add column capture text not null default 'automatic'
  check (capture in ('automatic', 'manual', 'captured', 'voided'));

-- The per-deployment key of the simulator's card fingerprints (an HMAC of the number: never the number).
create table simulator_fingerprint_key (
  id boolean primary key default true check (id),
  key text not null
);
insert into simulator_fingerprint_key (key) values (replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
