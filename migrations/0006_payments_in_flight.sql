-- Payments outside transactions (issue 9): an attempt is committed PENDING with processing_since
-- set before the processor is called, and the outcome is recorded in a second transaction. The
-- mark is what reserves a payment link's place, keeps the session from expiring under the call,
-- refuses a second attempt on the same session, and what the sweeper looks for after a crash.
alter table payments add column processing_since timestamptz;
create index payments_in_flight on payments (processing_since) where processing_since is not null;
-- quantity_limit counts SUCCEEDED and in-flight payments of a link under its row lock.
create index payments_link_taken on payments (payment_link_id)
  where payment_link_id is not null and (status = 'SUCCEEDED' or processing_since is not null);

-- The built-in simulator's own state, as a real processor keeps it on its side: written by the
-- simulator itself, never inside one of our transactions, so that after a crash the sweeper can
-- ask it what became of an attempt. Card numbers are not kept here either.
create table simulator_intents (
  id text collate "C" primary key,
  reference text collate "C" not null unique,    -- our checkout session id: one intent per session
  amount_cents bigint not null,
  currency text not null,
  customer text,
  livemode boolean not null,
  created_at timestamptz not null default now()
);

create table simulator_attempts (
  attempt_id text collate "C" primary key,       -- our payment id
  intent_id text collate "C" not null,
  status text not null check (status in ('succeeded', 'requires_action', 'declined', 'not_found')),
  code text,
  message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
