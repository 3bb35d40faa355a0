import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../lib/errors.ts';
import { formText } from '../../pages/index.ts';
import type { DashContext } from '../context.ts';
import { inviteUser } from '../service.ts';
import { listUsers } from '../store.ts';
import { usersBody, type UsersView } from './views.ts';

/** /dashboard/users: who can sign in, and inviting someone: a one-time link, emailed to them and shown once. */
export function usersPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const linkHours = Math.round(s.config.dashboard.passwordLinkSeconds / 3600);
  const page = async (req: Request, res: Response, status: number, extra: Partial<UsersView> = {}) => {
    const users = await listUsers(s.sql, ctx.session(res).account_id);
    await ctx.render(req, res, (f) => ({ section: 'users', title: 'Users', body: usersBody({ users, linkHours, ...extra }, f) }), status);
  };
  r.get('/', (req, res) => page(req, res, 200));
  // The answer holds the one-time link: shown once, a replay of the form goes to the list without it.
  r.post(
    '/',
    ctx.action(
      async (req, _res, se) => {
        const email = formText((req.body as Record<string, unknown>).email);
        const result = await inviteUser(s, req.log, se, email);
        if (!result.ok) throw new ApiError('parameter_invalid', result.problem, 'email');
        req.log.info({ component: 'dashboard', user: se.user_id, invited: result.user.id, emailId: result.emailId }, 'dashboard user invited');
        const users = await listUsers(s.sql, se.account_id);
        const link = { email: result.user.email, url: result.url };
        return { show: (f) => ({ section: 'users', title: 'Users', body: usersBody({ users, link, linkHours }, f) }), replay: '/dashboard/users' };
      },
      (req, res, err) => page(req, res, err.status, { email: formText((req.body as Record<string, unknown>).email), error: err.message }),
    ),
  );
  return r;
}
