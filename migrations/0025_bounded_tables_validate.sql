-- Bounded tables (issue 23), step 2 of 4 (0024 explains the four). Each legacy bound is proved
-- for the rows already there: one scan per table under SHARE UPDATE EXCLUSIVE, which lets reads
-- and writes go on (it waits only for, and only blocks, DDL and VACUUM of that table).
alter table events validate constraint events_legacy_bound;
alter table webhook_deliveries validate constraint webhook_deliveries_legacy_bound;
alter table webhook_attempts validate constraint webhook_attempts_legacy_bound;
alter table emails validate constraint emails_legacy_bound;
alter table processor_events validate constraint processor_events_legacy_bound;
alter table idempotency_keys validate constraint idempotency_keys_legacy_bound;
