-- Issue 26, point 5: delivery analytics. One row per endpoint and hour of the last 30 days, kept in
-- the transaction that records the attempts (src/webhooks/stats.ts): attempts, successes, and a
-- histogram of their durations (counts per bucket of STATS_BUCKETS_MS). Bounded by construction:
-- the key is the hour's slot in a 30-day ring (hours since the epoch modulo 720), and an attempt of
-- a new hour overwrites the slot's row of 30 days before, so an endpoint never has more than 720
-- rows and no retention pass is needed. Deleted with its endpoint (store.ts deleteEndpoint); no
-- foreign key, so that an attempt finishing as its endpoint is deleted never fails its batch.
create table webhook_endpoint_hourly (
  endpoint_id text collate "C" not null,
  slot smallint not null check (slot between 0 and 719),
  hour timestamptz not null,
  attempts integer not null,
  succeeded integer not null,
  latency_buckets integer[] not null,
  primary key (endpoint_id, slot)
);
