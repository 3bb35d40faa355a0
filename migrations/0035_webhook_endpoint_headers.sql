-- Issue 26, point 3: up to 10 custom headers per endpoint, sent on every delivery and test event.
-- Kept in clear like the signing secret (every attempt sends them), never shown again by the API
-- or the dashboard (masked), never logged. {"Header-Name": "value", …}.
alter table webhook_endpoints add column headers jsonb not null default '{}'::jsonb;
