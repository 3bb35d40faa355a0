import { Router, type Request, type Response } from 'express';
import { getBranding, type AccountBranding } from '../../auth/keys.ts';
import { UpdateAccount } from '../../auth/schema.ts';
import { updateAccount } from '../../auth/service.ts';
import type { ApiError } from '../../lib/errors.ts';
import { validate } from '../../lib/validate.ts';
import { allowBrand } from '../../pages/index.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { checked, fieldsOf, orNull } from '../forms.ts';
import type { FormState } from '../widgets.ts';
import { SETTINGS_PATH, settingsPage, settingsValues } from './views.ts';

const DONE = { saved: 'Settings saved. Your hosted pages and new emails use them now.' };

/**
 * /dashboard/settings: the account's business name, support email, brand colour and logo, shared
 * by test and live, set through PATCH /v1/account's schema and function (src/auth/service.ts).
 */
export function settingsPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;

  /** The page, its preview showing the saved branding: the logo's origin is allowed in this response's img-src only. */
  const show = async (req: Request, res: Response, state: (saved: AccountBranding) => FormState, status = 200) => {
    const saved = await getBranding(s.sql, ctx.owner(res).accountId);
    allowBrand(res, { business_name: saved.business_name, brand_color: null, logo_url: saved.logo_url });
    await ctx.render(req, res, (f) => settingsPage(saved, state(saved), f, doneNotice(req, DONE)), status);
  };

  r.get('/', allow('settings.manage'), (req, res) => show(req, res, (saved) => ({ values: settingsValues(saved) })));

  r.post(
    '/', allow('settings.manage'),
    ctx.action(
      async (req, res, se) => {
        const v = fieldsOf(req);
        // An empty field clears the setting (null), as null does over the API.
        const input = validate(UpdateAccount, {
          business_name: orNull(v.business_name),
          support_email: orNull(v.support_email),
          brand_color: checked(v.brand_color_default) ? null : orNull(v.brand_color),
          logo_url: orNull(v.logo_url),
        });
        await updateAccount(s.sql, ctx.owner(res), input, req.log.child({ component: 'dashboard', user: se.user_id }), ctx.actor(req, res));
        return { redirect: `${SETTINGS_PATH}?done=saved` };
      },
      (req: Request, res: Response, err: ApiError) => show(req, res, () => ({ values: fieldsOf(req), error: err }), err.status),
    ),
  );

  return r;
}
