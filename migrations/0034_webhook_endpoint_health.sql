-- Issue 26, point 1: endpoint health and automatic disabling. Kept incrementally on the endpoint's
-- row in the transaction that records its attempts' outcomes (src/webhooks/health.ts), never by
-- scanning the partitioned deliveries or attempts.
alter table webhook_endpoints
  -- The start of the current unbroken run of failed attempts; null while the last outcome was a success.
  add column failing_since timestamptz,
  -- Failed attempts since failing_since (reset by a success, and when the endpoint is re-enabled).
  add column failed_attempts integer not null default 0,
  -- The "disabled in a day" warning of the current run was queued (one per run of failures).
  add column failure_warned_at timestamptz,
  -- The service disabled the endpoint for its failures (null: never, or re-enabled since).
  add column disabled_at timestamptz;

-- The operational emails of the endpoints (to the account's owners and administrators).
alter table emails drop constraint emails_template_check;
alter table emails add constraint emails_template_check
  check (template in ('receipt', 'refund_notice', 'invoice', 'invoice_reminder', 'invitation',
                      'portal_link', 'installment_failed', 'installment_defaulted',
                      'webhook_endpoint_failing', 'webhook_endpoint_disabled'));
