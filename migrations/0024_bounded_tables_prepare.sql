-- Bounded tables (issue 23), step 1 of 4: docs/decisions.md, "Bounded tables: partitions and
-- retention". Events, webhook deliveries and attempts, emails, processor events and idempotency
-- keys become range-partitioned by time, and whole partitions are dropped past their retention.
--
-- The rows already there are not copied: in 0026 each table becomes the "legacy" partition of its
-- new parent, holding the keys below `cutover`, and is dropped whole once `cutover` is past
-- retention. Attaching a table as a partition needs a proof that every row fits its bound: a CHECK
-- constraint implying it, validated. The four steps, so that no step holds a lock that blocks
-- reads or writes for longer than a moment, whatever the size of the tables:
--   0024 (this file): the plan, the functions, and each legacy bound as CHECK ... NOT VALID:
--        ACCESS EXCLUSIVE on each table for a moment, no scan. The foreign keys between these
--        tables are dropped (ACCESS EXCLUSIVE for a moment on both sides).
--   0025: VALIDATE CONSTRAINT, one scan of each table under SHARE UPDATE EXCLUSIVE: reads and
--        writes go on during the scan (only DDL and VACUUM of that table wait).
--   0026: in one short transaction, ACCESS EXCLUSIVE on the six tables: each is renamed to
--        <name>_legacy, its partitioned parent created under the old name, the legacy table
--        attached (no scan: the validated constraint proves the bound).
--   0027: the partitions ahead, each created apart and attached: SHARE UPDATE EXCLUSIVE on the
--        parents, which blocks no read or write.
--
-- `cutover` is the first partition boundary at least two days ahead: rows written by processes
-- still running while these migrations run (up to 0026) satisfy the constraint; the margin only has
-- to cover the time between 0024 and 0026, which `npm run migrate` applies one after the other.

-- All six at once, in the order the service's transactions take them (an event, then its
-- deliveries, then their attempts): a transaction in flight finishes first instead of deadlocking
-- with this one half-way. Held for the moment this transaction lasts.
lock table events, webhook_deliveries, webhook_attempts, emails, processor_events, idempotency_keys in access exclusive mode;

create table partitioned_tables (
  name text primary key,
  -- The partition key: a time-ordered id column (its prefix in id_prefix, src/lib/ids.ts) or a
  -- timestamptz column (id_prefix null).
  key_column text not null,
  id_prefix text,
  -- Width of one partition; partitions start at multiples of it since 1970-01-01 00:00 UTC.
  width_days integer not null check (width_days between 1 and 28),
  -- The legacy partition (the table as it was) holds the keys below this moment.
  cutover timestamptz not null,
  -- Where the regular partitions start: `cutover`, or the migration's day when the table was empty
  -- and no legacy partition was kept. Set by 0026.
  partitions_from timestamptz
);

/** The start of the partition of width `width_days` that holds the moment `at`. */
create function partition_floor(at timestamptz, width_days integer) returns timestamptz
language sql immutable strict parallel safe as $$
  select to_timestamp(floor(extract(epoch from at) / (86400 * width_days)) * 86400 * width_days)
$$;

insert into partitioned_tables (name, key_column, id_prefix, width_days, cutover)
select t.name, t.key_column, t.id_prefix, t.width_days,
       partition_floor(now() + interval '2 days' + make_interval(days => t.width_days) - interval '1 microsecond', t.width_days)
from (values
  ('events', 'id', 'evt', 1),
  ('webhook_deliveries', 'id', 'wd', 1),
  -- Attempts follow their delivery: partitioned by its id, with the same bounds, dropped with it.
  ('webhook_attempts', 'delivery_id', 'wd', 1),
  ('emails', 'id', 'em', 7),
  ('processor_events', 'received_at', null, 7),
  ('idempotency_keys', 'created_at', null, 1)
) as t (name, key_column, id_prefix, width_days);

/**
 * The lowest id of `prefix` for the moment `at`: src/lib/ids.ts `idFloor` (Crockford base32 of the
 * millisecond time, then 19 zeros). Every id minted at `at` or later sorts at or after it.
 */
create function id_floor(prefix text, at timestamptz) returns text
language plpgsql immutable strict parallel safe as $$
declare
  ms bigint := greatest(0, floor(extract(epoch from at) * 1000)::bigint);
  digits text := '';
begin
  for i in 1..10 loop
    digits := substr('0123456789abcdefghjkmnpqrstvwxyz', (ms % 32)::integer + 1, 1) || digits;
    ms := ms / 32;
  end loop;
  return prefix || '_' || digits || repeat('0', 19);
end $$;

/** The millisecond an id was minted at (its first 10 characters after the prefix). */
create function id_time(id text) returns timestamptz
language plpgsql immutable strict parallel safe as $$
declare
  body text := substr(id, strpos(id, '_') + 1, 10);
  ms bigint := 0;
begin
  for i in 1..10 loop
    ms := ms * 32 + strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(body, i, 1)) - 1;
  end loop;
  return to_timestamp(ms / 1000.0);
end $$;

/** A partition bound of `tbl` at the moment `at`, as an SQL literal (ISO 8601 in UTC for a time key). */
create function partition_bound(tbl text, at timestamptz) returns text
language sql stable strict as $$
  select quote_literal(case when t.id_prefix is null then to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                            else id_floor(t.id_prefix, at) end)
  from partitioned_tables t where t.name = tbl
$$;

-- Nothing points at these tables any more (docs/decisions.md): a resend made on the last day of an
-- event's retention lives in a later partition of deliveries than its event, and a foreign key
-- would forbid dropping the event's partition.
alter table webhook_deliveries drop constraint webhook_deliveries_event_id_fkey;
alter table webhook_attempts drop constraint webhook_attempts_delivery_id_fkey;

-- Each legacy bound, NOT VALID: no scan now (0025 validates).
do $$
declare
  t partitioned_tables;
begin
  for t in select * from partitioned_tables order by name loop
    execute format('alter table %I add constraint %I check (%I < %s) not valid',
                   t.name, t.name || '_legacy_bound', t.key_column, partition_bound(t.name, t.cutover));
  end loop;
end $$;
