import { z } from 'zod';
import type postgres from 'postgres';
import { ApiError, invalidParam } from './errors.ts';
import { isId, type IdPrefix } from './ids.ts';
import { text, validate } from './validate.ts';
import { emptyFragment } from './fragments.ts';

/**
 * Keyset pagination on time-ordered ids (DESIGN 2). A cursor is only compared, never looked up,
 * so it keeps working after its row is deleted, and a deep page costs what the first one does.
 */
export interface PageParams {
  limit: number;
  starting_after?: string | undefined;
  ending_before?: string | undefined;
}

export interface ListEnvelope<T> {
  object: 'list';
  url: string;
  has_more: boolean;
  data: T[];
}

const cursor = (prefix: IdPrefix, description: string) =>
  z
    .string()
    .refine((v) => isId(prefix, v), `must be the id of a ${prefix}_ object`)
    .optional()
    .meta({ description, example: `${prefix}_01m89emrkt0006k689spej1tdy0e8` });

/**
 * An integer query parameter: decimal digits only (no sign other than a leading minus, no
 * exponent, no blank, no repeat), between `min` and `max` so that it is safe for Postgres and Date.
 */
export function queryInt(min: number, max: number, message: string) {
  return z
    .string({ error: message })
    .regex(/^-?\d{1,16}$/, message)
    .transform(Number)
    .pipe(z.number().int(message).min(min, message).max(max, message));
}

/** The query schema of a list endpoint: limit, the two cursors, and the resource's own filters. */
export function listQuerySchema<F extends z.ZodRawShape>(prefix: IdPrefix, filters: F) {
  return z.strictObject({
    limit: queryInt(1, 100, 'limit must be an integer between 1 and 100')
      .default(10)
      .meta({ description: 'How many objects a page holds, 1 to 100.' }),
    starting_after: cursor(prefix, 'The next page: the objects after this id (the last `id` of the previous page). Keeps working after its object is deleted.'),
    ending_before: cursor(prefix, 'The previous page: the objects before this id (the first `id` of the current page). Not with `starting_after`.'),
    ...filters,
  });
}

/**
 * The customer filter of a list, under either name: `customer` (the spec's example, 4.5) or
 * `customer_id` (the field's name on the objects). Both are accepted everywhere a list filters by
 * customer; customerOf reads the one given.
 */
export const customerFilter = {
  customer: text(100).optional().meta({ description: 'Only the objects of this customer (`cus_…`); the same filter as `customer_id`.' }),
  customer_id: text(100).optional().meta({ description: 'Only the objects of this customer (`cus_…`).' }),
};

/** The customer a list is filtered by, under either name; both with different values is a 400. */
export function customerOf(q: { customer?: string | undefined; customer_id?: string | undefined }): string | undefined {
  if (q.customer !== undefined && q.customer_id !== undefined && q.customer !== q.customer_id) {
    throw invalidParam('customer', 'customer and customer_id name the same filter: send one of them.');
  }
  return q.customer_id ?? q.customer;
}

/** Validates a list query; sending both cursors is a 400. */
export function parseListQuery<S extends z.ZodType<PageParams>>(schema: S, query: unknown): z.output<S> {
  const q = validate(schema, query, 'query');
  if (q.starting_after && q.ending_before) {
    throw new ApiError(
      'pagination_cursors_conflict',
      'You may only specify one of these parameters: starting_after, ending_before.',
      'ending_before',
    );
  }
  return q;
}

/**
 * The keyset part of a list query: `and id < cursor order by id desc limit n+1` going forward,
 * `and id > cursor order by id asc` going backward (the rows are put back newest first after).
 * The limit is written into the statement, not passed as a parameter: Postgres costs the generic
 * plan of a prepared statement with `limit $n` as if it read a tenth of the rows, finds it dearer
 * than a custom plan and plans again on every call; on a partitioned table (events, emails:
 * migration 0026) that means planning every partition, for each page (bench/RESULTS.md,
 * "Retention"). `limit` is a whole number from the query schema (1 to 100).
 */
export function keyset(sql: postgres.Sql, p: PageParams, column = 'id') {
  const fixed = fixedParts(sql, column);
  const backward = p.ending_before !== undefined;
  const limit = Math.trunc(p.limit) + 1;
  return {
    where: p.starting_after ? sql`and ${fixed.col} < ${p.starting_after}` : backward ? sql`and ${fixed.col} > ${p.ending_before!}` : emptyFragment(sql),
    order: backward ? fixed.asc : fixed.desc,
    limit: limit <= MAX_FIXED_LIMIT ? (fixed.limits[limit] ??= sql.unsafe(String(limit))) : sql.unsafe(String(limit)),
  };
}

/** The parts of keyset queries without a value of the caller's, made once per pool and column. */
interface FixedParts {
  col: postgres.Helper<string>;
  asc: postgres.PendingQuery<postgres.Row[]>;
  desc: postgres.PendingQuery<postgres.Row[]>;
  /** `limit + 1`, by value, made when first asked for (the query schema allows 1 to 100). */
  limits: Array<postgres.PendingQuery<postgres.Row[]>>;
}
const MAX_FIXED_LIMIT = 101;
const fixedByPool = new WeakMap<postgres.Sql, Map<string, FixedParts>>();

/**
 * A fragment is only read when a query is written out (postgres.js's `fragment` reads its strings
 * and values), so one made once serves every query: a list page no longer makes four fragments (each
 * a Promise) to say `order by id desc limit 11` (issue 28: postgres.js cost the first page about 30
 * µs more than its floor).
 */
function fixedParts(sql: postgres.Sql, column: string): FixedParts {
  let byColumn = fixedByPool.get(sql);
  if (!byColumn) fixedByPool.set(sql, (byColumn = new Map()));
  let parts = byColumn.get(column);
  if (!parts) {
    const col = sql(column);
    parts = {
      col,
      asc: sql`order by ${col} asc`,
      desc: sql`order by ${col} desc`,
      limits: [],
    };
    byColumn.set(column, parts);
  }
  return parts;
}

/** Turns the `limit + 1` rows of a keyset query into a list envelope, newest first. */
export function toList<R, T>(rows: readonly R[], p: PageParams, url: string, present: (row: R) => T): ListEnvelope<T> {
  const has_more = rows.length > p.limit;
  const page = rows.slice(0, p.limit);
  if (p.ending_before !== undefined) page.reverse();
  return { object: 'list', url, has_more, data: page.map(present) };
}
