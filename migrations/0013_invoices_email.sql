-- Invoices, emails and the merchant's business name (issue 13).

-- The name payers see: the sender name of every email, the heading of the hosted invoice page
-- and its PDF. Null until the merchant sets it (POST /v1/account, or keys:create --name).
alter table accounts add column business_name text;

-- Every email is a row first (written in the transaction of what caused it), then a BullMQ job
-- (jobId = the email id) that sends it. The row is the truth: the reconciler re-enqueues PENDING
-- rows whose job Redis lost. Content is rendered when the row is written, so a retry sends the
-- same message; card numbers, API keys and customer notes are never part of it.
create table emails (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  to_address text not null,
  template text not null check (template in ('receipt', 'refund_notice', 'invoice', 'invoice_reminder')),
  subject text not null,
  text_body text not null,
  html_body text not null,
  status text not null default 'PENDING' check (status in ('PENDING', 'SENT', 'FAILED')),
  attempts integer not null default 0,
  last_error text,
  transport text,                 -- 'smtp' or 'log' (no SMTP_URL): how it left, once SENT
  message_id text,                -- the SMTP Message-Id
  related_object text collate "C", -- the payment, refund or invoice it is about
  dedupe_key text,                -- one receipt per payment, one notice per refund, one reminder per number
  sent_at timestamptz,
  failed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index emails_page on emails (account_id, livemode, id);
create index emails_related on emails (account_id, livemode, related_object, id);
create unique index emails_dedupe on emails (account_id, livemode, dedupe_key) where dedupe_key is not null;
create index emails_pending on emails (created_at) where status = 'PENDING';

create table invoices (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  customer_id text collate "C" not null,
  number text,                    -- assigned at finalization, gapless per account and mode
  status text not null default 'DRAFT' check (status in ('DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE')),
  currency text not null,
  line_items jsonb not null default '[]',
  total_cents bigint not null default 0 check (total_cents >= 0),
  amount_paid_cents bigint not null default 0 check (amount_paid_cents >= 0 and amount_paid_cents <= total_cents),
  amount_due_cents bigint generated always as (total_cents - amount_paid_cents) stored,
  description text,
  due_date timestamptz,
  allow_partial_payments boolean not null default false,
  minimum_payment_cents bigint check (minimum_payment_cents > 0),
  hosted_token text collate "C" not null unique, -- the unguessable key of the hosted page, live once sent
  metadata jsonb not null default '{}',
  finalized_at timestamptz,
  sent_at timestamptz,
  paid_at timestamptz,
  voided_at timestamptz,
  marked_uncollectible_at timestamptz,
  reminder_count integer not null default 0,
  last_reminder_at timestamptz,
  next_reminder_at timestamptz,   -- when the next reminder is due (null: none planned)
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (account_id, livemode, number)
);
create index invoices_page on invoices (account_id, livemode, id);
create index invoices_status_page on invoices (account_id, livemode, status, id);
create index invoices_customer_page on invoices (account_id, livemode, customer_id, id);
create index invoices_reminders_due on invoices (next_reminder_at) where status = 'OPEN' and next_reminder_at is not null;

-- The last number given per account and mode: finalization locks and bumps it in its own
-- transaction, so a rolled-back finalization gives its number back and numbers have no gaps.
create table invoice_numbers (
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  last_number integer not null,
  primary key (account_id, livemode)
);

alter table checkout_sessions add column invoice_id text collate "C" references invoices (id);
alter table payments add column invoice_id text collate "C" references invoices (id);
create index checkout_sessions_invoice on checkout_sessions (invoice_id) where invoice_id is not null;
-- What an invoice's attempts in flight reserve, counted under its row lock (and what refuses a void).
create index payments_invoice_in_flight on payments (invoice_id)
  where invoice_id is not null and processing_since is not null;
