-- Issue 28.2, second round: filling a customer's processor twin no longer writes an entry into
-- every index of customers (docs/decisions.md, "Issue 28.2, second round").
-- Until now the sweep's work list was the partial index customers_missing_processor
-- (`where processor_customer_id is null`, migration 0005): the update that fills the twin changed a
-- column of an index predicate, so it was never HOT and wrote a new entry into each of the table's
-- other eight indexes (three of them GIN), about the work of inserting the customer again.
-- Now the work list is a table of its own, written by the customer's insert (the same statement)
-- and emptied by the sweep; no index of customers names processor_customer_id, and new pages of
-- customers keep a little more than half their room free (fillfactor 45: the row grows by the twin's
-- id), so the update stays on the row's page, a HOT update with no index entry at all. Measured on
-- 5,000 new rows (docs/decisions.md): WAL records 56,749 -> 5,000 for their twins, heap 1.8 x, the
-- table with its nine indexes 1.08 x. Bounded like the index it replaces: a row per customer still
-- waiting for its twin (live customers wait while live payments are off).
create table processor_customers_due (
  id text collate "C" primary key, -- the customer
  livemode boolean not null
);
insert into processor_customers_due (id, livemode) select id, livemode from customers where processor_customer_id is null;
drop index customers_missing_processor;
-- New pages only: the rows already there (with their twins) stay where they are.
alter table customers set (fillfactor = 45);
