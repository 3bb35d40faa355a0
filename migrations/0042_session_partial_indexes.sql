-- Issue 28, point 4: expiry at 100,000 sessions a window. Every status change of a checkout
-- session is a non-HOT update (status is in checkout_sessions_status_page and in the schedule's
-- predicate), so it inserts a new entry into every index whose predicate the new row satisfies.
-- Four indexes only ever serve lookups of a value that is there: a customer, an email, a word of
-- the email, a metadata pair. Partial on that value being there, they cost nothing for a session
-- without it, on its create and on each of its status changes (docs/decisions.md, "Issue 28.4").
-- The queries that use them state the same condition (src/search/store.ts) or imply it
-- (`customer_id = $1`). Built in the migration's transaction, as 0037 built them: writes to
-- checkout_sessions wait for the build (seconds per million rows).

drop index checkout_sessions_customer_page;
create index checkout_sessions_customer_page on checkout_sessions (account_id, livemode, customer_id, id)
  where customer_id is not null;

drop index checkout_sessions_search_email;
create index checkout_sessions_search_email on checkout_sessions (account_id, livemode, lower(customer_email), id)
  where customer_email is not null;

drop index checkout_sessions_search_metadata;
create index checkout_sessions_search_metadata on checkout_sessions using gin (metadata jsonb_path_ops)
  where metadata <> '{}'::jsonb;

do $$
begin
  if exists (select 1 from pg_indexes where indexname = 'checkout_sessions_search_text') then
    drop index checkout_sessions_search_text;
    create index checkout_sessions_search_text on checkout_sessions
      using gin ((lower(coalesce(customer_email, ''))) gin_trgm_ops) where customer_email is not null;
  end if;
end $$;
