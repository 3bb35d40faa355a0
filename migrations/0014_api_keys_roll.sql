-- Issue 14: key management over the API. A rolled key keeps working until expires_at (the end of
-- the roll's overlap, at most 7 days); last_used_at is written at most once a minute per key per
-- process, off the request's path.
alter table api_keys add column expires_at timestamptz;
alter table api_keys add column last_used_at timestamptz;
-- Lists of one account's keys in one mode, newest first.
create index api_keys_owner on api_keys (account_id, livemode, id);
