-- Bounded tables (issue 23), step 3 of 4 (0024 explains the four). One short transaction: each
-- table is renamed <name>_legacy, its range-partitioned parent takes the old name, and the legacy
-- table is attached as the partition of the keys below `cutover` without a scan (0025 proved the
-- bound) and without copying a row; an empty table is dropped instead.
-- Statements waiting on the old tables see the new ones once this commits (Postgres looks a name
-- up again after a lock wait), and prepared statements are planned again.

-- All six at once and in one order: a transaction of the service touching several of them cannot
-- deadlock with this one half-way.
lock table events, webhook_deliveries, webhook_attempts, emails, processor_events, idempotency_keys in access exclusive mode;

/**
 * Creates the partitions of `tbl` covering [from_at, to_at) that do not exist yet (never below its
 * `partitions_from`) and answers their names. Each is created apart and then attached: CREATE TABLE
 * ... PARTITION OF would take ACCESS EXCLUSIVE on the parent, blocking every read; ATTACH takes SHARE
 * UPDATE EXCLUSIVE, which blocks none (and an empty table attaches without a scan). Callers hold
 * the table's retention lock (src/retention/store.ts) or, here, the migration's.
 */
create function create_partitions(tbl text, from_at timestamptz, to_at timestamptz) returns setof text
language plpgsql as $$
declare
  t partitioned_tables;
  start_at timestamptz;
  part text;
begin
  select * into strict t from partitioned_tables where name = tbl;
  start_at := partition_floor(greatest(from_at, t.partitions_from), t.width_days);
  while start_at < to_at loop
    part := tbl || '_p' || to_char(start_at at time zone 'UTC', 'YYYYMMDD');
    if to_regclass(quote_ident(part)) is null then
      execute format('create table %I (like %I including defaults including constraints including storage including comments including generated)', part, tbl);
      execute format('alter table %I attach partition %I for values from (%s) to (%s)', tbl, part,
                     partition_bound(tbl, start_at), partition_bound(tbl, start_at + make_interval(days => t.width_days)));
      return next part;
    end if;
    start_at := start_at + make_interval(days => t.width_days);
  end loop;
end $$;

/** Each partition of the bounded tables with the start and the end of its range (null: unbounded). */
create view table_partitions as
select t.name as parent, c.relname::text as partition,
       case when b.lower_bound is null then null
            when t.id_prefix is null then b.lower_bound::timestamptz
            else id_time(b.lower_bound) end as lower_at,
       case when b.upper_bound is null then null
            when t.id_prefix is null then b.upper_bound::timestamptz
            else id_time(b.upper_bound) end as upper_at
from partitioned_tables t
join pg_inherits i on i.inhparent = to_regclass(quote_ident(t.name))
join pg_class c on c.oid = i.inhrelid
cross join lateral (select pg_get_expr(c.relpartbound, c.oid) as expr) e
cross join lateral (select substring(e.expr from 'FROM \(''([^'']*)''\)') as lower_bound,
                           substring(e.expr from 'TO \(''([^'']*)''\)') as upper_bound) b;

/**
 * An index of a bounded table that the legacy partition cannot share (a unique index without the
 * partition key) is created ON ONLY the parent: each new partition gets its own, the legacy
 * partition keeps its old one, and the parent's index stays invalid, which changes nothing for
 * queries (each partition is searched with its own indexes). Once the legacy partition is dropped,
 * attaching one partition's index again makes the parent's valid.
 */
create function revalidate_partition_indexes(tbl text) returns void
language plpgsql as $$
declare
  r record;
begin
  for r in
    select pi.indexrelid::regclass::text as parent_index,
           (select ci.inhrelid::regclass::text from pg_inherits ci where ci.inhparent = pi.indexrelid limit 1) as child_index
    from pg_index pi
    where pi.indrelid = to_regclass(quote_ident(tbl)) and not pi.indisvalid
  loop
    if r.child_index is not null then
      execute format('alter index %s attach partition %s', r.parent_index, r.child_index);
    end if;
  end loop;
end $$;

/** Renames `tbl` (and its indexes) to <tbl>_legacy and creates its partitioned parent under the old name. */
create function pg_temp.swap_begin(tbl text) returns void
language plpgsql as $$
declare
  t partitioned_tables;
  legacy text := tbl || '_legacy';
  idx text;
begin
  select * into strict t from partitioned_tables where name = tbl;
  execute format('alter table %I rename to %I', tbl, legacy);
  for idx in select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = to_regclass(quote_ident(legacy)) loop
    execute format('alter index %I rename to %I', idx,
                   case when starts_with(idx, tbl || '_') then legacy || substr(idx, length(tbl) + 1) else legacy || '_' || idx end);
  end loop;
  -- The columns, defaults and CHECK constraints as they are now (whatever migrations added), but
  -- not the legacy bound.
  execute format('create table %I (like %I including defaults including constraints including storage including comments including generated) partition by range (%I)',
                 tbl, legacy, t.key_column);
  execute format('alter table %I drop constraint %I', tbl, tbl || '_legacy_bound');
end $$;

/**
 * Attaches <tbl>_legacy for the keys below `cutover` (no scan: its validated bound proves it) and
 * regular partitions start at `cutover`. An empty legacy table is dropped, and they start a week
 * back: a process whose clock is behind still finds a partition for the ids it mints on the first
 * day (with a legacy partition, it holds everything before `cutover`).
 */
create function pg_temp.swap_attach(tbl text) returns void
language plpgsql as $$
declare
  t partitioned_tables;
  legacy text := tbl || '_legacy';
  has_rows boolean;
begin
  select * into strict t from partitioned_tables where name = tbl;
  execute format('select exists (select 1 from %I)', legacy) into has_rows;
  if has_rows then
    execute format('alter table %I attach partition %I for values from (minvalue) to (%s)', tbl, legacy, partition_bound(tbl, t.cutover));
    update partitioned_tables set partitions_from = t.cutover where name = tbl;
  else
    execute format('drop table %I', legacy);
    update partitioned_tables set partitions_from = partition_floor(now() - interval '7 days', t.width_days) where name = tbl;
  end if;
end $$;

-- Events: by id. Lookups by id and keyset lists on (account, livemode, id) prune to the partitions
-- of the ids they ask for.
select pg_temp.swap_begin('events');
alter table events add primary key (id);
alter table events add foreign key (account_id) references accounts (id);
create index events_page on events (account_id, livemode, id);
create index events_type_page on events (account_id, livemode, type, id);
select pg_temp.swap_attach('events');

-- Deliveries: by their own id (a resend's delivery is younger than its event).
select pg_temp.swap_begin('webhook_deliveries');
alter table webhook_deliveries add primary key (id);
alter table webhook_deliveries add foreign key (account_id) references accounts (id);
create index webhook_deliveries_event on webhook_deliveries (event_id, id);
create index webhook_deliveries_endpoint_open on webhook_deliveries (endpoint_id) where status in ('PENDING', 'PAUSED');
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'PENDING';
create index webhook_deliveries_endpoint_page on webhook_deliveries (endpoint_id, id);
create index webhook_deliveries_endpoint_status on webhook_deliveries (endpoint_id, status, id);
create index webhook_deliveries_pending_created on webhook_deliveries (created_at) where status = 'PENDING'; -- 0023, the metrics
select pg_temp.swap_attach('webhook_deliveries');

-- Attempts: by their delivery's id, so that they share its partition bounds and are dropped with it.
select pg_temp.swap_begin('webhook_attempts');
alter table webhook_attempts add primary key (delivery_id, attempt);
select pg_temp.swap_attach('webhook_attempts');

-- Emails: by id. The dedupe key is unique per account and mode, but a unique index of a partitioned
-- table must hold the partition key: a lookup index, and src/email/store.ts serialises the writers
-- of one key (src/db/locks.ts).
select pg_temp.swap_begin('emails');
alter table emails add primary key (id);
alter table emails add foreign key (account_id) references accounts (id);
create index emails_page on emails (account_id, livemode, id);
create index emails_related on emails (account_id, livemode, related_object, id);
create index emails_pending on emails (created_at) where status = 'PENDING';
select pg_temp.swap_attach('emails');
create index emails_dedupe on only emails (account_id, livemode, dedupe_key) where dedupe_key is not null;

-- Processor events: Stripe's ids are not ours, not time-ordered: by received_at. The id is looked up
-- in every partition (a handful: weekly partitions) and its writers serialised (src/db/locks.ts).
select pg_temp.swap_begin('processor_events');
select pg_temp.swap_attach('processor_events');
create index processor_events_id on only processor_events (id);

-- Idempotency keys: by created_at; a key is looked for only among the last KEY_TTL (24 hours),
-- which prunes to today's and yesterday's partitions. The claim serialises on the key.
select pg_temp.swap_begin('idempotency_keys');
select pg_temp.swap_attach('idempotency_keys');
create index idempotency_keys_key on only idempotency_keys (account_id, livemode, key, created_at);

-- The partitions from `partitions_from` to tomorrow: none where a legacy partition holds everything
-- before the cutover (two days ahead at least); a few where the table was empty. 0027 makes the
-- rest ahead, after this transaction has released its locks.
select count(*) from partitioned_tables t, create_partitions(t.name, '-infinity', now() + interval '1 day');

drop function pg_temp.swap_begin(text), pg_temp.swap_attach(text);
