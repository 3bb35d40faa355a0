import type postgres from 'postgres';

/** A pool or a transaction: what a fragment is made from. */
type SqlLike = postgres.Sql | postgres.TransactionSql;
type Fragment = postgres.PendingQuery<postgres.Row[]>;

const fragmentsBySql = new WeakMap<SqlLike, Map<(sql: SqlLike) => Fragment, Fragment>>();

/**
 * The fragment `make` writes, without values of the caller's, made once per `sql` object (a pool,
 * or a transaction, whose entry goes with it) and reused by every statement that embeds it:
 * postgres.js only reads a fragment's strings when such a statement is written out, and a fragment
 * made per call is a query object of its own, built every time (issue 28).
 */
export function fragmentOnce(sql: SqlLike, make: (sql: SqlLike) => Fragment): Fragment {
  let made = fragmentsBySql.get(sql);
  if (!made) fragmentsBySql.set(sql, (made = new Map()));
  let fragment = made.get(make);
  if (!fragment) made.set(make, (fragment = make(sql)));
  return fragment;
}

const empty = (sql: SqlLike): Fragment => sql``;

/** The empty fragment, for an optional part of a statement that is left out. */
export const emptyFragment = (sql: SqlLike): Fragment => fragmentOnce(sql, empty);
