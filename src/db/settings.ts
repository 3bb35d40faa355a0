import type postgres from 'postgres';

/**
 * Whether the server runs without autovacuum (`autovacuum = off`). Then no table is ever vacuumed
 * or analyzed: dead rows pile up, and a statement prepared while its table was small keeps the plan
 * it got then (Postgres plans a prepared statement again only when the table's statistics change).
 * Seen on a server so configured: a customer looked up by id, prepared when the table held one row,
 * read the whole table once it held 32,000 (17 ms against 0.05 ms; docs/operations.md).
 */
export async function autovacuumOff(sql: postgres.Sql): Promise<boolean> {
  const [row] = await sql<{ setting: string }[]>`select setting from pg_settings where name = 'autovacuum'`;
  return row?.setting === 'off';
}

export const AUTOVACUUM_OFF_WARNING =
  'autovacuum is off on this PostgreSQL server: no table is vacuumed or analyzed, so dead rows pile up and statements prepared while a table was small keep their plans as it grows (a lookup by id turns into a scan of the table). Turn it on (autovacuum = on, the default) or run VACUUM ANALYZE regularly.';
