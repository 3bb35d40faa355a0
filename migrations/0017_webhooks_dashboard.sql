-- Issue 14, the dashboard's Webhooks section: sample events, and the deliveries of an endpoint.

-- A sample event (POST /v1/webhook-endpoints/:id/test) is stored like any other event, so that its
-- delivery and attempts are recorded and it can be read by id; `sample` keeps it out of the
-- GET /v1/events lists, and it is never fanned out (only the endpoint it was sent to receives it).
alter table events add column sample boolean not null default false;

-- The deliveries of one endpoint, newest first (GET /v1/webhook-endpoints/:id/deliveries), with or
-- without a status filter; the status one also finds the FAILED deliveries that retry-failed sends again.
create index webhook_deliveries_endpoint_page on webhook_deliveries (endpoint_id, id);
create index webhook_deliveries_endpoint_status on webhook_deliveries (endpoint_id, status, id);
