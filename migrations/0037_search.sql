-- Issue 27, point 1: search (docs/search.md). Every clause of the query language is answered by an
-- index that starts with (account_id, livemode), or, for free text and metadata, a GIN index whose
-- rows are then filtered by account and mode. Plans are read in test/search/explain.test.ts.

-- Free text uses pg_trgm (available on every managed Postgres). Where it cannot be created (no
-- contrib package, no right to create it), the search still works with the same SQL, answered
-- without a trigram index: docs/search.md, "Without pg_trgm".
do $$
begin
  create extension if not exists pg_trgm;
exception when others then
  raise notice 'pg_trgm is not available (%): free-text search will run without a trigram index', sqlerrm;
end $$;

-- Payments.
create index payments_search_email on payments (account_id, livemode, lower(email), id);
create index payments_search_amount on payments (account_id, livemode, amount_cents, id);
create index payments_search_created on payments (account_id, livemode, created_at);
create index payments_search_last4 on payments (account_id, livemode, card_last4, id);

-- Customers (invoices and sessions search their customer's name and email through these too).
create index customers_search_email on customers (account_id, livemode, lower(email), id);
create index customers_search_created on customers (account_id, livemode, created_at);
create index customers_search_metadata on customers using gin (metadata jsonb_path_ops);

-- Invoices.
create index invoices_search_total on invoices (account_id, livemode, total_cents, id);
create index invoices_search_created on invoices (account_id, livemode, created_at);
create index invoices_search_metadata on invoices using gin (metadata jsonb_path_ops);

-- Checkout sessions (a payment's metadata is its session's).
create index checkout_sessions_search_email on checkout_sessions (account_id, livemode, lower(customer_email), id);
create index checkout_sessions_search_amount on checkout_sessions (account_id, livemode, amount_cents, id);
create index checkout_sessions_search_created on checkout_sessions (account_id, livemode, created_at);
create index checkout_sessions_search_metadata on checkout_sessions using gin (metadata jsonb_path_ops);

-- The trigram indexes, when pg_trgm is there. The expressions are the ones src/search/store.ts
-- writes, character for character: an index on another expression would not be used.
do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_trgm') then
    create index payments_search_text on payments
      using gin ((lower(coalesce(billing_name, '') || ' ' || coalesce(email, ''))) gin_trgm_ops);
    create index customers_search_text on customers
      using gin ((lower(first_name || ' ' || last_name || ' ' || coalesce(company_name, '') || ' ' || email)) gin_trgm_ops);
    create index customers_search_name on customers
      using gin ((lower(first_name || ' ' || last_name)) gin_trgm_ops);
    create index checkout_sessions_search_text on checkout_sessions
      using gin ((lower(coalesce(customer_email, ''))) gin_trgm_ops);
  end if;
end $$;
