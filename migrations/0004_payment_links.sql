-- Payment links, the views of their public pages, and the payments already added to their counters.
-- The counters (view_count, payment_count, total_collected_cents) are written only by the
-- link-counters jobs and the reconciler; payment-time limits count payments rows, never counters.

create table payment_links (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  livemode boolean not null,
  type text not null check (type in ('SINGLE', 'MULTI')),
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'COMPLETED', 'CANCELLED')),
  name text,
  -- The pattern is SLUG_PATTERN of src/payment-links/schema.ts (its one definition): change both together.
  slug text collate "C" check (slug ~ '^[a-z0-9-]{3,64}$'),
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  description text,
  customer_id text collate "C" references customers (id) on delete set null,
  collect_name boolean not null default false,
  collect_email boolean not null default false,
  collect_phone boolean not null default false,
  installment_enabled boolean not null default false,
  quantity_limit integer check (quantity_limit >= 1),
  view_count bigint not null default 0,
  payment_count bigint not null default 0,
  total_collected_cents bigint not null default 0,
  expires_at timestamptz,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index payment_links_page on payment_links (account_id, livemode, id);
create index payment_links_status_page on payment_links (account_id, livemode, status, id);
create index payment_links_type_page on payment_links (account_id, livemode, type, id);
-- Slugs are unique per account and mode; the public page resolves a slug across all of them
-- (see payment_link_path), hence the second, global index.
create unique index payment_links_slug on payment_links (account_id, livemode, slug) where slug is not null;
create index payment_links_public_slug on payment_links (slug, livemode desc, id) where slug is not null;

-- The path segment of a link's public URL. A slug belongs publicly to one link only: the live one
-- before a test one, then the first one created, so a later link of another account can never take
-- over a URL already shared. A link that does not hold its slug is reached by its id.
create function payment_link_path(p_id text, p_slug text, p_livemode boolean) returns text
language sql stable as $$
  select case
    when p_slug is null then p_id
    when exists (
      select 1 from payment_links o
      where o.slug = p_slug collate "C"
        and (o.livemode > p_livemode or (o.livemode = p_livemode and o.id < p_id collate "C"))
    ) then p_id
    else p_slug
  end
$$;

-- One row per page load, inserted in batches by the link-counters worker; the id is minted by the
-- web process, so a retried batch inserts nothing twice.
create table payment_link_views (
  id text collate "C" primary key,
  payment_link_id text collate "C" not null references payment_links (id),
  account_id text collate "C" not null,
  livemode boolean not null,
  source text not null check (source in ('DIRECT', 'EMBED', 'WHATSAPP', 'QR')),
  created_at timestamptz not null
);
create index payment_link_views_link on payment_link_views (payment_link_id, source);

-- Payments whose counter job has been applied: the job's idempotency record.
create table payment_link_counted_payments (
  payment_id text collate "C" primary key,
  payment_link_id text collate "C" not null references payment_links (id),
  counted_at timestamptz not null default now()
);

alter table checkout_sessions
  add constraint checkout_sessions_payment_link_fk foreign key (payment_link_id) references payment_links (id);
alter table payments
  add constraint payments_payment_link_fk foreign key (payment_link_id) references payment_links (id);
create index checkout_sessions_payment_link on checkout_sessions (payment_link_id) where payment_link_id is not null;
create index payments_payment_link on payments (payment_link_id, status) where payment_link_id is not null;
