-- A Payment Element attempt keeps the processor's last charge on its intent at the moment it was
-- prepared (null before any): a decline reported later about that same charge is an earlier
-- confirmation's, not this attempt's (docs/decisions.md, "Stripe processor": stale declines).
alter table payments add column processor_prior_charge text;
