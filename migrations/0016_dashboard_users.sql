-- Issue 14: the merchant dashboard's users, their sessions and their one-time set-password links.
-- Passwords are argon2id hashes in PHC form (parameters and salt with the hash); session tokens
-- and set-password tokens are stored as their sha256 only.
create table dashboard_users (
  id text collate "C" primary key,
  account_id text collate "C" not null references accounts (id) on delete cascade,
  email text not null,
  password_hash text, -- null until the user has chosen a password through a one-time link
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz
);
-- One user per email in an account, whatever the case of its letters; sign-in finds a user by email.
create unique index dashboard_users_email on dashboard_users (account_id, lower(email));
create index dashboard_users_by_email on dashboard_users (lower(email));

create table dashboard_sessions (
  token_hash bytea primary key,
  user_id text collate "C" not null references dashboard_users (id) on delete cascade,
  livemode boolean not null default false, -- the mode the dashboard shows (test until switched)
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index dashboard_sessions_user on dashboard_sessions (user_id);

create table dashboard_password_tokens (
  token_hash bytea primary key,
  user_id text collate "C" not null references dashboard_users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index dashboard_password_tokens_user on dashboard_password_tokens (user_id);
