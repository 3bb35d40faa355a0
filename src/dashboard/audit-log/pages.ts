import { Router, type Request } from 'express';
import { ListAuditEvents } from '../../audit/schema.ts';
import { listAuditEvents } from '../../audit/store.ts';
import { ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { formText } from '../../pages/index.ts';
import { listMembers } from '../../team/store.ts';
import { allow, type DashContext } from '../context.ts';
import { listQueryOf } from '../forms.ts';
import { toPage } from '../widgets.ts';
import { auditList } from './views.ts';

/** A day typed in the filter (UTC), as the first or last second of that day. */
function dayBound(value: unknown, name: 'from' | 'to'): { text: string; seconds: string } | null {
  const text = formText(value).trim();
  if (!text) return null;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms)) throw new ApiError('parameter_invalid', `Invalid ${name}: enter a day like 2026-11-25.`, name);
  return { text, seconds: String(ms / 1000 + (name === 'to' ? 86_399 : 0)) };
}

/**
 * /dashboard/audit-log (owners and administrators): the audit log of the account, the mode viewed
 * and what is account-wide, filtered by user, action and day range, through the schema and the
 * store function of GET /v1/audit-events. There is no form: nothing here changes the log.
 */
export function auditLogPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  r.get('/', allow('audit.read'), async (req: Request, res) => {
    const { from, to, ...rest } = listQueryOf(req);
    const f = dayBound(from, 'from');
    const t = dayBound(to, 'to');
    if (f) rest['created[gte]'] = f.seconds;
    if (t) rest['created[lte]'] = t.seconds;
    const q = parseListQuery(ListAuditEvents, rest);
    const o = ctx.owner(res);
    const [rows, users] = await Promise.all([
      listAuditEvents(s.sql, o.accountId, o.livemode, q, { actor: q.actor, action: q.action, createdGte: q['created[gte]'], createdLte: q['created[lte]'] }),
      listMembers(s.sql, o.accountId),
    ]);
    const shown = { actor: q.actor, action: q.action, from: f?.text, to: t?.text };
    await ctx.render(req, res, () => auditList(toPage(rows, q), users, shown, !!(q.starting_after || q.ending_before)));
  });
  return r;
}
