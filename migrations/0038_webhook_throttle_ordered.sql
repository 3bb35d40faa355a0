-- Issue 26, points 2 and 6: per-endpoint throttle and ordered mode.

-- Deliveries per second to the endpoint, across every worker process (a Redis GCRA per endpoint,
-- src/webhooks/throttle.ts); null: unthrottled.
alter table webhook_endpoints add column rate_limit integer check (rate_limit between 1 and 1000);
-- Deliveries about the same object (the event's data.object.id) go one after the other, in event order.
alter table webhook_endpoints add column ordered boolean not null default false;

-- The object a delivery of an ordered endpoint is about; null for every other delivery (and for those
-- made before the endpoint was ordered). A delivery with an object waits (PENDING, next_attempt_at
-- null: "parked") while an earlier delivery of the same endpoint and object is open (PENDING, PAUSED).
alter table webhook_deliveries add column object_id text collate "C";
-- Is there an earlier open delivery of this endpoint and object (the park check), and which one comes
-- next (the wake): a few rows per object at most, only the open ones of ordered endpoints.
create index webhook_deliveries_ordered_open on webhook_deliveries (endpoint_id, object_id, event_id, id)
  where object_id is not null and status in ('PENDING', 'PAUSED');
