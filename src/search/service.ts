import { ApiError } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import type { PageParams } from '../lib/pagination.ts';
import type { Sql } from '../db/sql.ts';
import { toCondition, type Condition, type Resource } from './fields.ts';
import { parseQuery, SearchSyntaxError } from './parse.ts';
import { search, type SearchRows } from './store.ts';

/**
 * A query read and checked for a resource; a malformed one is a 400 `parameter_invalid` on
 * `query` whose message names the position of the error (0-based, in characters).
 */
export function compileQuery(resource: Resource, query: string): Condition {
  try {
    return toCondition(resource, parseQuery(query));
  } catch (err) {
    if (err instanceof SearchSyntaxError) {
      const where = err.message.includes('position') ? '' : ` (position ${err.position})`;
      throw new ApiError('parameter_invalid', `query: ${err.message}${where}`, 'query');
    }
    throw err;
  }
}

/** One page of a search, newest first, within the owner's account and mode. */
export async function searchRecords<R extends Resource>(sql: Sql, o: Owner, resource: R, query: string, p: PageParams): Promise<SearchRows[R][]> {
  return search(sql, o, resource, compileQuery(resource, query), p);
}
