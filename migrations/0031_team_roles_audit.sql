-- Issue 25 (contract shared with issues 26 and 27): every dashboard user has a role, and every
-- security-relevant change is written to an append-only audit log in the transaction of the change.
-- The users made before roles existed are owners: until now every user could do everything.
alter table dashboard_users add column role text not null default 'owner'
  check (role in ('owner', 'administrator', 'developer', 'analyst', 'support'));

create table audit_events (
  id text collate "C" primary key,                        -- aud_…, time-ordered (src/lib/ids.ts)
  account_id text collate "C" not null references accounts (id),
  livemode boolean,                                       -- null: account-wide (team, account settings)
  actor_type text not null check (actor_type in ('user', 'api_key', 'system')),
  actor_id text collate "C",                              -- usr_… or the key's id (never its secret); null for system
  actor_label text,                                       -- the user's email or the key's redacted form, as it was then
  action text not null,                                   -- 'api_key.rolled', 'team.user_removed', …
  object_type text,
  object_id text collate "C",
  ip_address text,
  data jsonb not null default '{}'::jsonb,                -- what changed, never a secret
  created_at timestamptz not null default now()
);
create index audit_events_list on audit_events (account_id, id);
create index audit_events_by_actor on audit_events (account_id, actor_id, id);
create index audit_events_by_action on audit_events (account_id, action, id);

-- Append-only, whatever a route or a person with SQL access through the service's role tries.
create function audit_events_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'audit_events is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger audit_events_append_only before update or delete on audit_events
  for each row execute function audit_events_append_only();
