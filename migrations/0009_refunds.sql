-- Refunds (issue 11). A refund is committed PENDING before the processor is called (the sum check
-- and the insert in one transaction, under the payment's row lock) and settled in a second one.

-- The SUCCEEDED refunds of a payment, kept on its row (updated in the transaction that records a
-- refund's success) so that the payment object, its webhooks and link analytics read one column.
alter table payments add column amount_refunded_cents bigint not null default 0
  check (amount_refunded_cents >= 0 and amount_refunded_cents <= amount_cents);
-- Set by disputes (issue 11, point 7; migration 0010 reuses it). Added here so that a refund of a
-- disputed payment can be refused (charge_disputed) from the start.
alter table payments add column disputed boolean not null default false;

create table refunds (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  payment_id text collate "C" not null references payments (id),
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  status text not null default 'PENDING' check (status in ('PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
  reason text check (reason in ('duplicate', 'fraudulent', 'requested_by_customer')),
  failure_reason text,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index refunds_list on refunds (account_id, livemode, id);
create index refunds_of_payment on refunds (account_id, livemode, payment_id, id);
-- The sum check reads a payment's PENDING and SUCCEEDED refunds; the sweeper reads old PENDING ones.
create index refunds_payment on refunds (payment_id);
create index refunds_pending on refunds (created_at) where status = 'PENDING';

-- The simulator's refunds, as a processor keeps them on its side: written by the simulator's own
-- statements, never inside one of our transactions. The outcome is decided once settle_at has
-- passed (the first time anyone asks), or the refund is cancelled before: one winner.
create table simulator_refunds (
  refund_id text collate "C" primary key,        -- our refund id: createRefund is idempotent by it
  attempt_id text collate "C" not null,          -- our payment id (its simulator_attempts row)
  amount_cents bigint not null,
  currency text not null,
  status text not null check (status in ('pending', 'succeeded', 'failed', 'canceled')),
  planned text not null check (planned in ('succeeded', 'failed')),
  failure_reason text,
  settle_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
