import { Router, type Request, type Response } from 'express';
import { ListSessions } from '../../checkout/schema.ts';
import { expireSessionNow, listSessions, retrieveSession } from '../../checkout/service.ts';
import type { SessionRow } from '../../checkout/store.ts';
import { existingCustomerIds } from '../../customers/store.ts';
import type { ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId } from '../../lib/validate.ts';
import { findLink } from '../../payment-links/store.ts';
import { paymentsOfSession } from '../../payments/store.ts';
import { formText } from '../../pages/index.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { listQueryOf } from '../forms.ts';
import { html } from '../../pages/html.ts';
import { toPage } from '../widgets.ts';
import { sessionDetail, sessionPath, sessionsList } from './views.ts';

const DONE = { expired: 'The checkout session is expired: it can no longer be paid.' };

/**
 * /dashboard/checkout-sessions: the list (filter by status and customer), a session with its line
 * items, origin and payment attempts, and expiring an OPEN one, through the service functions and
 * schemas of /v1/checkout/sessions (a read expires a session past its time, as the API's does).
 */
export function checkoutSessionsPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const sessionId = (id: string) => pathId('cs', 'checkout_session', id);

  r.get('/', allow('read'), async (req, res) => {
    const q = parseListQuery(ListSessions, listQueryOf(req));
    const page = toPage(await listSessions(s, ctx.owner(res), q, req.log), q);
    const filters = { status: q.status, customer_id: q.customer_id };
    await ctx.render(req, res, () => sessionsList(page, filters, !!(q.starting_after || q.ending_before), doneNotice(req, DONE)));
  });

  /** The session page; `error` is the API's refusal of an action just tried. */
  const show = async (req: Request, res: Response, session: SessionRow, error: string | null = null, status = 200) => {
    const owner = ctx.owner(res);
    const [attempts, knownCustomers] = await Promise.all([paymentsOfSession(s.sql, owner, session.id), existingCustomerIds(s.sql, owner, [session.customer_id])]);
    const link = session.payment_link_id ? await findLink(s.sql, owner, session.payment_link_id) : undefined;
    const confirmExpire = !error && formText(req.query.confirm) === 'expire';
    await ctx.render(
      req,
      res,
      (f) =>
        sessionDetail(
          { session, attempts, knownCustomers, linkName: link ? (link.name ?? link.description) : null, checkoutUrl: s.config.checkoutUrl, confirmExpire, notice: error ? html`` : doneNotice(req, DONE), error },
          f,
        ),
      status,
    );
  };

  r.get('/:id', allow('read'), async (req, res) => {
    await show(req, res, await retrieveSession(s, ctx.owner(res), sessionId(req.params.id), req.log));
  });

  r.post(
    '/:id/expire', allow('payments.write'),
    ctx.action(
      async (req, res) => {
        const row = await expireSessionNow(s, ctx.owner(res), sessionId(req.params.id as string), req.log);
        return { redirect: `${sessionPath(row.id)}?done=expired` };
      },
      // The API's refusal (not OPEN, a payment in flight) on the session's page, which is unchanged.
      async (req: Request, res: Response, err: ApiError) => {
        if (err.code === 'resource_missing') throw err;
        const row = await retrieveSession(s, ctx.owner(res), sessionId(req.params.id as string), req.log);
        await show(req, res, row, err.message, err.status);
      },
    ),
  );

  return r;
}
