-- Issue 21, point 4: whether the address a webhook attempt connected to was other than public
-- (loopback, private: a local test-mode endpoint). Null when nothing answered, and for the attempts
-- made before this column, whose target is unknown. The response excerpt of such an attempt is
-- shown (API, dashboard) only where the service is clearly on a developer's machine.
alter table webhook_attempts add column target_private boolean;
