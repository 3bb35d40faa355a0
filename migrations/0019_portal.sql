-- Issue 16: the customer portal. A customer signs in with a one-time link (a "magic link", emailed,
-- or made by the merchant through POST /v1/customers/:id/portal-sessions); only the sha256 of each
-- token is stored. A portal session (a cookie) follows, bound to one customer of one account and mode.
create table portal_links (
  token_hash bytea primary key,
  account_id text collate "C" not null references accounts (id) on delete cascade,
  livemode boolean not null,
  customer_id text collate "C" not null references customers (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index portal_links_customer on portal_links (customer_id);

create table portal_sessions (
  token_hash bytea primary key,
  account_id text collate "C" not null references accounts (id) on delete cascade,
  livemode boolean not null,
  customer_id text collate "C" not null references customers (id) on delete cascade,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index portal_sessions_customer on portal_sessions (customer_id);

-- The emails of issue 16: the portal's sign-in link, and the notices of an installment plan.
alter table emails drop constraint emails_template_check;
alter table emails add constraint emails_template_check
  check (template in ('receipt', 'refund_notice', 'invoice', 'invoice_reminder', 'invitation',
                      'portal_link', 'installment_failed', 'installment_defaulted'));
