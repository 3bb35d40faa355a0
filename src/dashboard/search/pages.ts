import { Router } from 'express';
import { ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { formText } from '../../pages/index.ts';
import { RESOURCES, type Resource } from '../../search/fields.ts';
import { searchQuerySchema } from '../../search/schema.ts';
import { searchRecords } from '../../search/service.ts';
import type { Permission } from '../../team/roles.ts';
import { allow, type DashContext } from '../context.ts';
import { listQueryOf } from '../forms.ts';
import { toPage } from '../widgets.ts';
import { searchPage } from './views.ts';

/** What this section's pages ask of the user's role (src/team/roles.ts): reading records, as every list does. */
export const SEARCH_PERMISSION: Permission = 'read';

/**
 * /dashboard/search?q=…&in=payments: the search box's results, answered by the same service as
 * `GET /v1/search/<in>` within the session's account and mode; a malformed query shows the API's
 * message (with its position) beside the box, with a 400.
 */
export function searchPages(ctx: DashContext): Router {
  const r = Router();
  r.get('/', allow(SEARCH_PERMISSION), async (req, res) => {
    const { q, in: within, ...rest } = listQueryOf(req);
    const query = formText(q).trim();
    const resource: Resource = (RESOURCES as readonly string[]).includes(formText(within)) ? (formText(within) as Resource) : 'payments';
    if (!query) return ctx.render(req, res, () => searchPage({ query: '', resource, page: null, wasCursor: false, error: null }));
    try {
      const p = parseListQuery(searchQuerySchema(resource), { ...rest, query });
      const rows = await searchRecords(ctx.s.sql, ctx.owner(res), resource, p.query, p);
      await ctx.render(req, res, () => searchPage({ query, resource, page: toPage(rows, p), wasCursor: !!(p.starting_after || p.ending_before), error: null }));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 400 || err.param !== 'query') throw err;
      await ctx.render(req, res, () => searchPage({ query, resource, page: null, wasCursor: false, error: err.message.replace(/^query: /, '') }), 400);
    }
  });
  return r;
}
