-- Issue 25, point 3: two-factor sign-in to the dashboard (TOTP with recovery codes, passkeys),
-- required per account when an owner says so. docs/decisions.md, "Two-factor sign-in (issue 25)".
alter table accounts add column require_two_factor boolean not null default false;

-- TOTP (RFC 6238) through an authenticator app. The secret is shown once, at enrolment, and never
-- presented or logged again; it is kept as the app has it because every sign-in computes codes from it.
alter table dashboard_users
  add column totp_secret text,             -- base32; null: no authenticator app
  add column totp_enabled_at timestamptz,  -- null while an enrolment waits for its first code
  add column totp_last_step bigint;        -- the last time step accepted: no code of it or before is taken again

-- Ten single-use recovery codes per user with TOTP, stored as their sha256 only (about 59 random bits each).
create table dashboard_recovery_codes (
  user_id text collate "C" not null references dashboard_users (id) on delete cascade,
  code_hash bytea not null,
  created_at timestamptz not null default now(),
  used_at timestamptz,
  primary key (user_id, code_hash)
);

-- WebAuthn credentials (passkeys), a second factor after the password.
create table dashboard_passkeys (
  id text collate "C" primary key,                     -- pky_…
  user_id text collate "C" not null references dashboard_users (id) on delete cascade,
  credential_id text collate "C" not null unique,      -- base64url, as the browser names it
  public_key bytea not null,                           -- COSE
  counter bigint not null default 0,
  transports text[] not null default '{}',
  name text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index dashboard_passkeys_user on dashboard_passkeys (user_id, created_at);

-- Between the password and the second factor: not a session (no dashboard page accepts it). 'verify'
-- asks the user's factor; 'enrol' (the account requires two-factor, the user has none) sets one up.
-- A few minutes long, a few wrong codes, deleted when used; the rest by the hourly clean-up.
create table dashboard_sign_in_steps (
  token_hash bytea primary key,
  user_id text collate "C" not null references dashboard_users (id) on delete cascade,
  purpose text not null check (purpose in ('verify', 'enrol')),
  failures integer not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index dashboard_sign_in_steps_user on dashboard_sign_in_steps (user_id);
create index dashboard_sign_in_steps_expiry on dashboard_sign_in_steps (expires_at);

-- WebAuthn challenges handed out and not yet answered: each is taken once, a few minutes long.
create table dashboard_webauthn_challenges (
  challenge text collate "C" primary key,
  user_id text collate "C" not null references dashboard_users (id) on delete cascade,
  purpose text not null check (purpose in ('register', 'authenticate')),
  expires_at timestamptz not null
);
create index dashboard_webauthn_challenges_expiry on dashboard_webauthn_challenges (expires_at);
