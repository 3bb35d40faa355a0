import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../lib/errors.ts';
import { clientAddress, formText } from '../../pages/index.ts';
import { can } from '../../team/roles.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { qrSvg } from '../widgets.ts';
import type { SessionRow } from '../store.ts';
import { addPasskey, registrationOptions, relyingParty, removePasskey } from './passkeys.ts';
import { beginTotp, confirmTotp, renewRecoveryCodes, setRequirement, turnOffTotp, type UserActor } from './service.ts';
import { findFactors, listPasskeys } from './store.ts';
import { securityBody, type PasskeyScripts, type SecurityView, type TotpSetup } from './views.ts';

export const SECURITY_PATH = '/dashboard/security';

const DONE: Record<string, string> = {
  totp_off: 'The authenticator app is off, and its recovery codes no longer work.',
  passkey_added: 'Passkey added. Sign-in asks for it after your password.',
  passkey_removed: 'Passkey removed.',
  required_on: 'Two-factor sign-in is now required for every user. Those without a second factor were signed out.',
  required_off: 'Two-factor sign-in is no longer required.',
};

type Errors = NonNullable<SecurityView['errors']>;

export const actorOf = (req: Request, se: SessionRow): UserActor => ({ userId: se.user_id, accountId: se.account_id, email: se.email, ip: clientAddress(req) });

export async function totpSetupOf(setup: { secret: string; uri: string }): Promise<TotpSetup> {
  return { ...setup, qrSvg: await qrSvg(setup.uri) };
}

/**
 * /dashboard/security (issue 25, point 3): the signed-in user's second factors (an authenticator
 * app with recovery codes, passkeys) and, for a user who may manage the team, "require two-factor
 * for every user". Every user reaches it, whatever their role: each manages only their own factors.
 * Secrets and recovery codes are shown in the answer of the form that made them, once: a replay
 * of that form goes back to the page without them.
 */
export function securityPages(ctx: DashContext, scripts: PasskeyScripts): Router {
  const r = Router();
  const { s } = ctx;
  const rp = (se: SessionRow) => relyingParty(s.config.publicBaseUrl, se.business_name ?? 'Payments dashboard');
  const issuer = (se: SessionRow) => se.business_name ?? 'Payments dashboard';

  const view = async (req: Request, se: SessionRow, extra: Partial<SecurityView> = {}): Promise<SecurityView> => {
    const actor = actorOf(req, se);
    const factors = await findFactors(s.sql, se.user_id);
    if (!factors) throw new ApiError('resource_missing', 'No such user.');
    return {
      factors,
      passkeys: await listPasskeys(s.sql, se.user_id),
      canRequire: can(factors.role, 'team.manage'),
      registerOptions: await registrationOptions(s.sql, rp(se), actor),
      ...extra,
    };
  };
  const page = (v: SecurityView) => (f: Parameters<typeof securityBody>[1]) => ({ section: 'security' as const, title: 'Security', body: securityBody(v, f, scripts) });
  const again = (key: keyof Errors) => async (req: Request, res: Response, err: ApiError) => {
    const se = ctx.session(res);
    await ctx.render(req, res, page(await view(req, se, { errors: { [key]: err.message } })), err.status);
  };
  const refuse = (problem: string, param: string): never => {
    throw new ApiError('parameter_invalid', problem, param);
  };
  const body = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

  r.get('/', allow('read'), async (req, res) => {
    const se = ctx.session(res);
    await ctx.render(req, res, page(await view(req, se, { notice: doneNotice(req, DONE) })));
  });

  r.post(
    '/totp',
    allow('read'),
    ctx.action(async (req, _res, se) => {
      const setup = await beginTotp(s.sql, actorOf(req, se), issuer(se));
      if (!setup) return { redirect: SECURITY_PATH };
      req.log.info({ component: 'dashboard', user: se.user_id }, 'two-factor enrolment started');
      const v = await view(req, se, { totpSetup: await totpSetupOf(setup) });
      return { show: page(v), replay: SECURITY_PATH };
    }),
  );

  r.post(
    '/totp/confirm',
    allow('read'),
    ctx.action(async (req, _res, se) => {
      const codes = await confirmTotp(s.sql, actorOf(req, se), formText(body(req).code));
      if (!codes) return refuse('That code is not right. Enter the six digits your app shows now.', 'code');
      req.log.info({ component: 'dashboard', user: se.user_id }, 'two-factor sign-in turned on');
      return { show: page(await view(req, se, { recoveryCodes: codes })), replay: SECURITY_PATH };
    }, again('totp_confirm')),
  );

  r.post(
    '/totp/off',
    allow('read'),
    ctx.action(async (req, _res, se) => {
      const done = await turnOffTotp(s.sql, actorOf(req, se), formText(body(req).code));
      if (!done.ok) return refuse(done.problem, done.param);
      req.log.info({ component: 'dashboard', user: se.user_id }, 'two-factor authenticator app turned off');
      return { redirect: `${SECURITY_PATH}?done=totp_off` };
    }, again('totp_off')),
  );

  r.post(
    '/recovery-codes',
    allow('read'),
    ctx.action(async (req, _res, se) => {
      const codes = await renewRecoveryCodes(s.sql, actorOf(req, se));
      if (!codes) return { redirect: SECURITY_PATH };
      return { show: page(await view(req, se, { recoveryCodes: codes })), replay: SECURITY_PATH };
    }),
  );

  r.post(
    '/passkeys',
    allow('read'),
    ctx.action(async (req, _res, se) => {
      const done = await addPasskey(s.sql, rp(se), actorOf(req, se), formText(body(req).credential), formText(body(req).name));
      if (!done.ok) return refuse(done.problem, done.param);
      req.log.info({ component: 'dashboard', user: se.user_id }, 'passkey added');
      return { redirect: `${SECURITY_PATH}?done=passkey_added` };
    }, again('passkey')),
  );

  r.post(
    '/passkeys/remove',
    allow('read'),
    ctx.action(async (req, _res, se) => {
      const done = await removePasskey(s.sql, actorOf(req, se), formText(body(req).id));
      if (!done.ok) return refuse(done.problem, done.param);
      return { redirect: `${SECURITY_PATH}?done=passkey_removed` };
    }, again('passkey')),
  );

  r.post(
    '/required',
    allow('team.manage'),
    ctx.action(async (req, _res, se) => {
      const value = formText(body(req).required);
      if (value !== 'true' && value !== 'false') return refuse('required must be true or false.', 'required');
      const done = await setRequirement(s.sql, actorOf(req, se), value === 'true', se.token_hash);
      if (!done.ok) {
        if (done.forbidden) throw new ApiError('forbidden', done.problem, done.param);
        return refuse(done.problem, done.param);
      }
      req.log.info({ component: 'dashboard', user: se.user_id, required: value === 'true', sessionsEnded: done.ended }, 'two-factor requirement changed');
      return { redirect: `${SECURITY_PATH}?done=required_${value === 'true' ? 'on' : 'off'}` };
    }, again('required')),
  );

  return r;
}
