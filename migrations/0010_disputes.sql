-- Disputes (issue 11): a chargeback the processor reports on a SUCCEEDED payment. The processor's
-- dispute id is unique, so learning of the same dispute twice (the job and the reconcile pass)
-- records it once. payments.disputed is added by 0009 (refunds).
create table disputes (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  payment_id text collate "C" not null references payments (id),
  processor_dispute_id text collate "C" not null unique,
  processor_created_at timestamptz not null,   -- the sync's cursor (max of it, less an overlap)
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  reason text not null,
  status text not null check (status in ('NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST')),
  evidence jsonb not null default '{}',
  evidence_due_by timestamptz not null,
  -- A call to the processor committed but not yet answered (record, commit, call, record): the
  -- sweeper repeats the call (idempotent at the processor) when it stays set after a crash.
  pending_action text check (pending_action in ('submit', 'close')),
  action_since timestamptz,
  submitted_at timestamptz,
  closed_at timestamptz,
  -- When the sync last asked the processor about a dispute UNDER_REVIEW (the oldest are asked first).
  checked_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((pending_action is null) = (action_since is null))
);
create index disputes_page on disputes (account_id, livemode, id);
create index disputes_payment_page on disputes (account_id, livemode, payment_id, id);
create index disputes_status_page on disputes (account_id, livemode, status, id);
create index disputes_processor_created on disputes (processor_created_at);
create index disputes_in_flight on disputes (action_since) where action_since is not null;
create index disputes_under_review on disputes (checked_at nulls first) where status = 'UNDER_REVIEW';

-- The simulator's side of a dispute, as a processor keeps it: created when it is asked for
-- disputes and finds an attempt of the disputed card (behaviour 'disputed') that succeeded a
-- moment ago; decided when asked about it after evidence was submitted.
create table simulator_disputes (
  id text collate "C" primary key,
  attempt_id text collate "C" not null unique,   -- our payment id
  intent_id text collate "C" not null,
  amount_cents bigint not null,
  currency text not null,
  livemode boolean not null,
  reason text not null,
  status text not null check (status in ('needs_response', 'under_review', 'won', 'lost')),
  evidence jsonb,
  outcome text check (outcome in ('won', 'lost')),   -- decided at submission (test evidence strings)
  decide_at timestamptz,
  evidence_due_by timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index simulator_disputes_created on simulator_disputes (created_at, id);
create index simulator_attempts_disputed on simulator_attempts (updated_at) where behaviour = 'disputed' and status = 'succeeded';
