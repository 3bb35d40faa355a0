-- Installment plans (issue 16, points 1 to 6). A plan is created ACTIVE in the transaction that
-- records the success of its first part (paid on an ordinary hosted checkout); its later parts are
-- charged off-session on the card the processor keeps (never our database), each as a `payments`
-- row like any other. Parts are rows of their own: their state, the next attempt and the payment
-- of each attempt are what the charge job, the dunning and the repair passes read.
create table installment_plans (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  customer_id text collate "C" not null,          -- plain reference, as on payments: a deleted customer keeps its plans
  payment_link_id text collate "C",
  invoice_id text collate "C",
  checkout_session_id text collate "C" not null unique, -- the session of the first part: one plan per session
  currency text not null,
  total_cents bigint not null check (total_cents > 0),
  count integer not null check (count between 2 and 24),
  interval text not null check (interval in ('week', 'month')),
  -- Test mode only: the interval and the dunning step shortened to seconds (INSTALLMENT_TEST_*).
  test_interval_seconds integer check (test_interval_seconds > 0),
  test_retry_seconds integer check (test_retry_seconds > 0),
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'COMPLETED', 'DEFAULTED', 'CANCELLED')),
  email text not null,                            -- where the plan's notices go
  description text,
  -- The card kept at the processor for the later parts: its reusable id there, brand and last four.
  processor_payment_method text,
  card_brand text,
  card_last4 text,
  -- What the payer agreed to on the page, word for word, when and from where.
  agreement_text text not null,
  agreed_at timestamptz not null,
  agreement_ip text,
  metadata jsonb not null default '{}',
  completed_at timestamptz,
  defaulted_at timestamptz,
  cancelled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((payment_link_id is null) <> (invoice_id is null)),
  check (livemode = false or (test_interval_seconds is null and test_retry_seconds is null))
);
create index installment_plans_page on installment_plans (account_id, livemode, id);
create index installment_plans_customer_page on installment_plans (account_id, livemode, customer_id, id);
create index installment_plans_status_page on installment_plans (account_id, livemode, status, id);
create index installment_plans_link_page on installment_plans (account_id, livemode, payment_link_id, id) where payment_link_id is not null;
create index installment_plans_invoice_page on installment_plans (account_id, livemode, invoice_id, id) where invoice_id is not null;

create table installments (
  plan_id text collate "C" not null references installment_plans (id),
  number integer not null check (number between 1 and 24),
  amount_cents bigint not null check (amount_cents > 0),
  due_at timestamptz not null,
  status text not null default 'SCHEDULED' check (status in ('SCHEDULED', 'PAID', 'RETRYING', 'FAILED', 'CANCELLED')),
  -- When the next charge is due: due_at, then the dunning schedule; null once PAID, FAILED or CANCELLED.
  next_attempt_at timestamptz,
  attempt_count integer not null default 0,
  payment_id text collate "C",                    -- the payment of the last attempt (the paying one once PAID)
  first_failed_at timestamptz,                    -- the dunning's retries are counted from the first failure
  paid_at timestamptz,
  primary key (plan_id, number),
  check ((status in ('SCHEDULED', 'RETRYING')) = (next_attempt_at is not null))
);
-- The charge jobs' repair pass and advance-time look for parts due: a small, hot set.
create index installments_due on installments (next_attempt_at) where status in ('SCHEDULED', 'RETRYING');

-- What links and invoices offer: null options are the default (one plan of 3 monthly payments).
alter table payment_links add column installment_options jsonb;
alter table invoices add column allow_installments boolean not null default false;
alter table invoices add column installment_options jsonb;

-- A part's charge is a payment like any other; the payment names the plan and the part it pays.
-- processor_payment_method: the reusable card the processor saved with a first part (or charged).
alter table payments add column installment_plan_id text collate "C";
alter table payments add column installment_number integer;
alter table payments add column processor_payment_method text;
create index payments_installment_plan on payments (installment_plan_id, id) where installment_plan_id is not null;
-- The in-flight sweeper of installment charges (no checkout session) reads these.
create index payments_off_session_in_flight on payments (processing_since)
  where processing_since is not null and checkout_session_id is null;

-- The plan a payer chose on a link or invoice page, carried by the checkout session of its first
-- part (count, interval, total, the agreement, the payer's email), or the plan whose card a
-- card-update session replaces. Opaque to checkout but for what it shows and asks the processor.
alter table checkout_sessions add column installment jsonb;
-- Setup sessions (mode 'setup') collect and save a card without charging it: a plan's new card.
alter table checkout_sessions add column mode text not null default 'payment' check (mode in ('payment', 'setup'));
alter table checkout_sessions drop constraint checkout_sessions_amount_cents_check;
alter table checkout_sessions add constraint checkout_sessions_amount_cents_check
  check ((mode = 'payment' and amount_cents > 0) or (mode = 'setup' and amount_cents = 0));

-- One press of "Save card" on a setup session: recorded, committed in flight, then the processor
-- is called, then the answer is recorded (as payments are). Only brand and last four are kept.
create table card_setups (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  checkout_session_id text collate "C" not null references checkout_sessions (id),
  status text not null default 'PENDING' check (status in ('PENDING', 'SUCCEEDED', 'FAILED')),
  next_action text,
  processing_since timestamptz,
  email text,
  billing_name text,
  card_brand text,
  card_last4 text,
  processor_payment_method text,
  failure_code text,
  failure_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index card_setups_session on card_setups (checkout_session_id);
create index card_setups_in_flight on card_setups (processing_since) where processing_since is not null;

-- The simulator keeps a saved card as a token with brand, last four and its scripted behaviour
-- (4000 0000 0000 0341: later off-session charges are declined); never the card number.
create table simulator_payment_methods (
  id text collate "C" primary key,                -- pm_sim_…
  livemode boolean not null,
  brand text not null,
  last4 text not null,
  behaviour text check (behaviour in ('off_session_declines')),
  created_at timestamptz not null default now()
);
-- The card an attempt saved (a first part, a setup) or charged off-session (a later part).
alter table simulator_attempts add column payment_method text;
alter table simulator_attempts drop constraint simulator_attempts_behaviour_check;
alter table simulator_attempts add constraint simulator_attempts_behaviour_check
  check (behaviour in ('refunds_fail', 'disputed', 'off_session_declines'));
