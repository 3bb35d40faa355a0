import { Router } from 'express';
import { allow, type DashContext } from '../context.ts';
import { homeNumbers } from './store.ts';
import { homeBody } from './views.ts';

/** /dashboard: the volumes and counts of the session's account and mode. */
export function homePages(ctx: DashContext): Router {
  const r = Router();
  r.get('/', allow('read'), async (req, res) => {
    const numbers = await homeNumbers(ctx.s.sql, ctx.owner(res));
    await ctx.render(req, res, () => ({ section: 'home', title: 'Home', body: homeBody(numbers) }));
  });
  return r;
}
