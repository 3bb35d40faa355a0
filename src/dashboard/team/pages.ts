import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { ApiError } from '../../lib/errors.ts';
import { currencySchema, MAX_AMOUNT } from '../../lib/currency.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { clientAddress, formText } from '../../pages/index.ts';
import { ROLES } from '../../team/roles.ts';
import { changeRole, removeMember, updateRefundLimit, type TeamActor } from '../../team/service.ts';
import { getRefundLimits, listMembers } from '../../team/store.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { fieldsOf, optional, parseAmount } from '../forms.ts';
import { inviteUser } from '../service.ts';
import type { SessionRow } from '../store.ts';
import { TEAM_PATH, teamBody, type TeamView } from './views.ts';

const DONE = {
  invited: 'Invitation sent. The link to choose a password goes only to their email address.',
  invited_logged:
    "Invitation made. SMTP_URL is unset, so its email (with the link to choose a password) was written to the service's log instead of being sent: whoever reads that log can pass it on.",
  role_changed: 'Role changed. It applies to their next page.',
  removed: 'Removed. Their sessions have ended and any invitation no longer works.',
  limit_saved: "Support's refund limit saved.",
};

const RoleForm = z.strictObject({ role: z.enum(ROLES) });
const LimitForm = z.strictObject({ currency: currencySchema, amount: z.int().min(1).max(MAX_AMOUNT).nullable() });

/**
 * /dashboard/team (owners and administrators): the members and their roles, invitations by email
 * (the link goes only to the invitee), removals (sessions end at once), and the owner's refund
 * limit of the support role. Every change goes through src/team/service.ts under the team's lock.
 */
export function teamPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const linkHours = Math.round(s.config.dashboard.passwordLinkSeconds / 3600);
  const actorOf = (req: Request, se: SessionRow): TeamActor => ({ accountId: se.account_id, userId: se.user_id, email: se.email, role: se.role, ip: clientAddress(req) });
  const userId = (id: string) => pathId('usr', 'user', id);

  const page = async (req: Request, res: Response, status: number, extra: Partial<TeamView> = {}) => {
    const se = ctx.session(res);
    const [members, limits] = await Promise.all([listMembers(s.sql, se.account_id), getRefundLimits(s.sql, se.account_id)]);
    let confirmRemove = null;
    if (formText(req.query.confirm) === 'remove') {
      const m = members.find((x) => x.id === formText(req.query.user));
      if (m && !(m.role === 'owner' && se.role !== 'owner')) confirmRemove = m;
    }
    const view: TeamView = { me: { userId: se.user_id, role: se.role }, members, limits, linkHours, notice: doneNotice(req, DONE), confirmRemove, ...extra };
    await ctx.render(req, res, (f) => ({ section: 'team', title: 'Team', body: teamBody(view, f) }), status);
  };
  const problem = (req: Request, res: Response, err: ApiError) => page(req, res, err.status, { problem: err.message });

  r.get('/', allow('team.manage'), (req, res) => page(req, res, 200));

  // The answer never holds the link: it goes to the invitee's address only.
  r.post(
    '/invitations',
    allow('team.manage'),
    ctx.action(
      async (req, _res, se) => {
        const v = fieldsOf(req);
        const { role } = validate(RoleForm, { role: v.role });
        const result = await inviteUser(s, req.log, se, v.email ?? '', role, clientAddress(req));
        if (!result.ok) throw new ApiError('parameter_invalid', result.problem, 'email');
        req.log.info({ component: 'dashboard', user: se.user_id, invited: result.user.id, emailId: result.emailId }, 'dashboard user invited');
        return { redirect: `${TEAM_PATH}?done=${s.mailer.kind === 'smtp' ? 'invited' : 'invited_logged'}` };
      },
      (req, res, err) => page(req, res, err.status, { invite: { values: fieldsOf(req), error: { message: err.message, param: err.param } } }),
    ),
  );

  r.post(
    '/users/:id/role',
    allow('team.manage'),
    ctx.action(async (req, _res, se) => {
      const { role } = validate(RoleForm, { role: fieldsOf(req).role });
      await changeRole(s, req.log, actorOf(req, se), userId(req.params.id as string), role);
      return { redirect: `${TEAM_PATH}?done=role_changed` };
    }, problem),
  );

  r.post(
    '/users/:id/remove',
    allow('team.manage'),
    ctx.action(async (req, _res, se) => {
      await removeMember(s, req.log, actorOf(req, se), userId(req.params.id as string));
      return { redirect: `${TEAM_PATH}?done=removed` };
    }, problem),
  );

  r.post(
    '/refund-limits',
    allow('refunds.limit'),
    ctx.action(
      async (req, _res, se) => {
        const v = fieldsOf(req);
        const currency = (v.currency ?? '').trim().toLowerCase();
        const typed = optional(v.amount);
        const input = validate(LimitForm, { currency, amount: typed === undefined ? null : parseAmount(typed, currency) });
        await updateRefundLimit(s, req.log, actorOf(req, se), input.currency, input.amount);
        return { redirect: `${TEAM_PATH}?done=limit_saved` };
      },
      (req, res, err) => page(req, res, err.status, { limit: { values: fieldsOf(req), error: { message: err.message, param: err.param } } }),
    ),
  );

  return r;
}
