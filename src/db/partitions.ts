import type { Db } from './sql.ts';

/**
 * `column` between the least and the greatest of `ids`, to add beside `column = any(ids)` on a table
 * partitioned by that column (migration 0026). Postgres prunes partitions for `= any($1)` only when
 * the array is a constant of the statement, and prepared statements pass it as a parameter; a range
 * of two parameters prunes at executor start-up, so a batch of recent ids reads only the recent
 * partitions' indexes. `ids` must not be empty.
 */
export function withinIds(db: Db, column: string, ids: readonly string[]) {
  let low = ids[0]!;
  let high = low;
  for (const id of ids) {
    if (id < low) low = id;
    if (id > high) high = id;
  }
  return db`${db(column)} between ${low} and ${high}`;
}
