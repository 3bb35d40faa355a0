import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { QUERY_MAX_LENGTH } from './parse.ts';
import type { Resource } from './fields.ts';

const PREFIX = { customers: 'cus', payments: 'pay', invoices: 'in', 'checkout-sessions': 'cs' } as const satisfies Record<Resource, string>;

const query = z
  .string({ error: 'query is required: a search such as email:"ada@example.com" AND amount>=4000' })
  .max(QUERY_MAX_LENGTH, `query has at most ${QUERY_MAX_LENGTH} characters`)
  .refine((v) => !v.includes('\u0000'), 'query must not contain NUL characters')
  .meta({ description: 'The search, in the query language of docs/search.md: `field:value`, `amount>=4000`, `metadata["key"]:"value"`, free text, combined with AND and OR.', example: 'email:"ada@example.com" AND amount>=4000' });

/** The query string of `GET /v1/search/<resource>`: the search and the list's cursors. */
export const searchQuerySchema = (resource: Resource) => listQuerySchema(PREFIX[resource], { query });
export type SearchQuery = z.infer<ReturnType<typeof searchQuerySchema>>;
