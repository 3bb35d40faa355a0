import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { idFloor, type IdPrefix } from '../../src/lib/ids.ts';

export const DAY = 24 * 3600 * 1000;

/** The bounded tables (migration 0024). */
export const BOUNDED = ['events', 'webhook_deliveries', 'webhook_attempts', 'emails', 'processor_events', 'idempotency_keys'];

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** An id of `prefix` minted at the millisecond `ms`, as newId would have made it then. */
export function idAt(prefix: IdPrefix, ms: number): string {
  const random = [...randomBytes(19)].map((b) => ALPHABET[b & 31]).join('');
  return idFloor(prefix, ms).slice(0, -19) + random;
}

/** Midnight UTC of the day of `ms`. */
export const dayStart = (ms: number) => Math.floor(ms / DAY) * DAY;

export interface PartitionRow {
  parent: string;
  partition: string;
  lower_at: Date | null;
  upper_at: Date | null;
}

export async function partitions(sql: postgres.Sql, table?: string): Promise<PartitionRow[]> {
  return sql<PartitionRow[]>`
    select parent, partition, lower_at, upper_at from table_partitions
    ${table ? sql`where parent = ${table}` : sql``}
    order by parent, upper_at nulls last`;
}

/** Whether a partition of `table` holds the moment `ms`. */
export function covers(parts: readonly PartitionRow[], table: string, ms: number): boolean {
  return parts.some((p) => p.parent === table && (p.lower_at === null || p.lower_at.getTime() <= ms) && p.upper_at !== null && ms < p.upper_at.getTime());
}

/** Every table and partitioned table of the schema. */
export async function relations(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select relname as name from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') order by relname`;
  return rows.map((r) => r.name);
}

/** The row count of every table that is neither bounded nor a partition of one. */
export async function otherTableCounts(sql: postgres.Sql): Promise<Record<string, number>> {
  const rows = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c
    where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' and not c.relispartition
      and c.relname <> all(${BOUNDED}::text[])
    order by c.relname`;
  const counts: Record<string, number> = {};
  for (const { name } of rows) {
    const [r] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(name)}`;
    counts[name] = r!.n;
  }
  return counts;
}
