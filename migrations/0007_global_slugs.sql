-- Slugs become unique across the whole deployment (every account, both modes), first come, and a
-- slug once taken stays with its account (docs/decisions.md, "Public URL and slugs").

-- Old data may hold one slug in several links. The link that holds it publicly today keeps it (the
-- rule of 0004's payment_link_path: live before test, then the oldest); the others lose their slug.
-- Their url does not change: payment_link_path already gave them their id URL.
with ranked as (
  select id, row_number() over (partition by slug order by livemode desc, id) as n
  from payment_links
  where slug is not null
)
update payment_links l set slug = null, updated_at = now()
from ranked r
where l.id = r.id and r.n > 1;

drop index payment_links_slug;
drop index payment_links_public_slug;
create unique index payment_links_slug on payment_links (slug) where slug is not null;

-- Every slug ever given to a link, and its account: a slug a merchant renames or clears is not
-- free for another account, so a URL already shared can never open another merchant's link.
create table payment_link_slugs (
  slug text collate "C" primary key,
  account_id text collate "C" not null references accounts (id),
  created_at timestamptz not null default now()
);
insert into payment_link_slugs (slug, account_id, created_at)
select slug, account_id, created_at from payment_links where slug is not null;

-- A link's path is now its slug, or its id without one. Kept (rather than dropped) so that a web
-- process still on the old code answers the same URLs during a rolling deploy.
create or replace function payment_link_path(p_id text, p_slug text, p_livemode boolean) returns text
language sql immutable as $$
  select coalesce(p_slug, p_id)
$$;
