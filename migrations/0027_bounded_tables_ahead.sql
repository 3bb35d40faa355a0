-- Bounded tables (issue 23), step 4 of 4 (0024 explains the four): the partitions of the next 14
-- days, made here rather than in the swap (0026), so that its ACCESS EXCLUSIVE locks last only for
-- the renames and the attaches. Each partition is created apart and attached (create_partitions):
-- SHARE UPDATE EXCLUSIVE on the parent, which blocks no read or write. The retention job and every
-- start-up keep making them ahead (RETENTION_PARTITIONS_AHEAD_DAYS).
select count(*) from partitioned_tables t, create_partitions(t.name, '-infinity', now() + interval '14 days');
