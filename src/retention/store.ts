import type { Db, TxSql } from '../db/sql.ts';

/** A partition of a bounded table and the end of its range (null: unbounded). */
export interface TablePartition {
  partition: string;
  upperAt: Date | null;
}

/**
 * Takes one table's retention lock for the transaction, or answers false at once when another run
 * (another worker, a start-up) holds it: that run is doing the same work. A transaction lock, never
 * a session one, so that it holds behind PgBouncer in transaction mode.
 */
export async function tryLockTable(tx: TxSql, table: string): Promise<boolean> {
  const [row] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(hashtext('retention'), hashtext(${table})) as locked`;
  return row!.locked;
}

/** The tables partitioned by time (migration 0024), as the database knows them. */
export async function partitionedTables(db: Db): Promise<string[]> {
  const rows = await db<{ name: string }[]>`select name from partitioned_tables order by name`;
  return rows.map((r) => r.name);
}

/** Creates the partitions of `table` covering [from, to) that are missing (SQL create_partitions, migration 0026); answers their names. */
export async function createPartitions(tx: TxSql, table: string, from: Date, to: Date): Promise<string[]> {
  const rows = await tx<{ name: string }[]>`select create_partitions(${table}, ${from}, ${to}) as name`;
  return rows.map((r) => r.name);
}

/** How far the partitions of each table partitioned by time reach: the end of its newest bounded partition (null: none). */
export async function partitionsReach(db: Db): Promise<Array<{ table: string; reach: Date | null }>> {
  return db<{ table: string; reach: Date | null }[]>`
    select t.name as table, max(p.upper_at) as reach
    from partitioned_tables t left join table_partitions p on p.parent = t.name
    group by t.name order by t.name`;
}

export async function partitionsOf(db: Db, table: string): Promise<TablePartition[]> {
  const rows = await db<{ partition: string; upper_at: Date | null }[]>`
    select partition, upper_at from table_partitions where parent = ${table} order by upper_at nulls last, partition`;
  return rows.map((r) => ({ partition: r.partition, upperAt: r.upper_at }));
}

/**
 * Drops one partition of `table` (its rows go with it, in constant time: the catalog and the files),
 * unless another run dropped it first; answers whether this call did. Holds ACCESS EXCLUSIVE on the
 * parent for the moment of the drop. Then the parent's indexes the legacy partition could not share
 * become valid again once it is gone (revalidate_partition_indexes, migration 0026).
 */
export async function dropPartition(tx: TxSql, table: string, partition: string): Promise<boolean> {
  const [row] = await tx<{ attached: boolean }[]>`
    select exists (select 1 from table_partitions where parent = ${table} and partition = ${partition}) as attached`;
  if (!row!.attached) return false;
  await tx`drop table ${tx(partition)}`;
  await tx`select revalidate_partition_indexes(${table})`;
  return true;
}
