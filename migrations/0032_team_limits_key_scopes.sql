-- Issue 25, point 1: the support role refunds up to an amount the owner sets, per currency (minor
-- units: {"usd": 5000, "jpy": 5000}); a currency without an amount is refused to support. Shared
-- by test and live, like the branding settings.
alter table accounts add column support_refund_limits jsonb not null default '{}'::jsonb
  check (jsonb_typeof(support_refund_limits) = 'object');

-- Issue 25, point 3: a key is full (null, every key made before) or restricted: per resource
-- 'none' | 'read' | 'write' ({"customers": "write", "payments": "read"}; a resource not named is none).
alter table api_keys add column permissions jsonb
  check (permissions is null or jsonb_typeof(permissions) = 'object');
