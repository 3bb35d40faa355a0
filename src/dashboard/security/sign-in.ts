import { Router, type NextFunction, type Request, type Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import { clientAddress, formText, sendHtml, type Csrf } from '../../pages/index.ts';
import type { Services } from '../../services.ts';
import { messagePage } from '../layout.ts';
import { signInThrottle } from '../throttle.ts';
import { addPasskey, authenticationOptions, checkPasskey, registrationOptions, relyingParty } from './passkeys.ts';
import { totpSetupOf } from './pages.ts';
import { beginTotp, checkSecondFactor, confirmTotp, type UserActor } from './service.ts';
import { deleteStep, findFactors, findStep, hasSecondFactor, insertStep, stepFailed, type FactorsRow, type StepPurpose, type StepRow } from './store.ts';
import { enrolDonePage, enrolPage, twoFactorPage, type EnrolView } from './sign-in-views.ts';
import type { PasskeyScripts } from './views.ts';

/**
 * The second step of the dashboard's sign-in (issue 25, point 3). After the right password a user
 * with a second factor, or without one in an account that requires it, gets no session: a step
 * token in its own cookie (path /dashboard/sign-in), valid for STEP_SECONDS and MAX_FAILURES wrong
 * codes, which only the pages below accept. The session starts when the factor is given (or, in
 * an account that requires two-factor, set up).
 */
export const STEP_COOKIE = 'dash_step';
export const STEP_PATH = '/dashboard/sign-in';
const STEP_SECONDS = 600;
const MAX_FAILURES = 5;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

type CookieOptions = { path: string; httpOnly: boolean; sameSite: 'lax'; secure: boolean };

export interface StepDeps {
  csrf: Csrf;
  scripts: PasskeyScripts;
  cookieOptions(req: Request): CookieOptions;
  /** Opens the dashboard session of a user who passed every step (pages.ts: the session cookie). */
  openSession(req: Request, res: Response, userId: string): Promise<void>;
}

/**
 * Right after the password: null when the user signs in now (no second factor, none required);
 * otherwise the step starts (its cookie set) and the answer is where to send the browser.
 */
export async function afterPassword(s: Services, req: Request, res: Response, userId: string, cookieOptions: CookieOptions): Promise<string | null> {
  const f = await findFactors(s.sql, userId);
  const purpose: StepPurpose | null = !f ? null : hasSecondFactor(f) ? 'verify' : f.require_two_factor ? 'enrol' : null;
  if (!purpose) return null;
  const token = await insertStep(s.sql, userId, purpose, STEP_SECONDS);
  res.append('Set-Cookie', stringifySetCookie(STEP_COOKIE, token, { ...cookieOptions, path: STEP_PATH, maxAge: STEP_SECONDS }));
  return purpose === 'verify' ? `${STEP_PATH}/two-factor` : `${STEP_PATH}/enrol`;
}

interface StepLocals {
  step: StepRow;
  factors: FactorsRow;
}
const stepOf = (res: Response): StepLocals => res.locals.twoFactorStep as StepLocals;

export function secondStepRouter(s: Services, deps: StepDeps): Router {
  const r = Router();
  const { csrf } = deps;
  const throttle = signInThrottle(s, 'second-factor');
  const scope = (step: StepRow) => `dashboard-step:${step.token_hash.toString('hex')}`;
  const rp = (f: FactorsRow) => relyingParty(s.config.publicBaseUrl, f.business_name ?? 'Payments dashboard');
  const actor = (req: Request, f: FactorsRow): UserActor => ({ userId: f.user_id, accountId: f.account_id, email: f.email, ip: clientAddress(req) });
  const clearStep = (req: Request, res: Response) =>
    res.append('Set-Cookie', stringifySetCookie(STEP_COOKIE, '', { ...deps.cookieOptions(req), path: STEP_PATH, maxAge: 0 }));
  const backToPassword = (req: Request, res: Response, notice = 'step_expired') => {
    clearStep(req, res);
    res.redirect(303, `${STEP_PATH}?${notice}=1`);
  };

  /** The step of the cookie, for this purpose; anything else goes back to the password. */
  const load = (purpose: StepPurpose) => async (req: Request, res: Response, next: NextFunction) => {
    const token = parseCookie(req.headers.cookie ?? '')[STEP_COOKIE];
    const step = token && TOKEN.test(token) ? await findStep(s.sql, token) : null;
    const factors = step?.purpose === purpose ? await findFactors(s.sql, step.user_id) : null;
    if (!step || !factors) return backToPassword(req, res);
    res.locals.twoFactorStep = { step, factors } satisfies StepLocals;
    if (req.method === 'POST' && !(await csrf.verify(req, scope(step)))) {
      return sendHtml(res, 403, messagePage('This form has expired', 'Reload the page and try again.'));
    }
    next();
  };

  /** Every step is done: the step ends (once: of two answers only one gets here) and the session starts. */
  const finish = async (req: Request, res: Response): Promise<boolean> => {
    const { step } = stepOf(res);
    if (!(await deleteStep(s.sql, step.token_hash))) {
      backToPassword(req, res);
      return false;
    }
    clearStep(req, res);
    await deps.openSession(req, res, step.user_id);
    return true;
  };

  // ---- verify: the user's authenticator app (or a recovery code), or a passkey.

  const verifyPage = async (req: Request, res: Response, status = 200, error: string | null = null) => {
    const { step, factors } = stepOf(res);
    sendHtml(
      res,
      status,
      twoFactorPage({
        csrf: await csrf.token(req, res, scope(step)),
        email: factors.email,
        totp: factors.totp_enabled,
        passkeyOptions: factors.passkeys > 0 ? await authenticationOptions(s.sql, rp(factors), factors.user_id) : null,
        error,
        scripts: deps.scripts,
      }),
    );
  };

  /** Throttled as passwords are (throttle.ts, counted apart); a wrong answer counts against the step too. */
  const attempt = async (req: Request, res: Response, method: 'code' | 'passkey', check: () => Promise<boolean>, wrong: string) => {
    const { step, factors } = stepOf(res);
    const count = (outcome: 'accepted' | 'refused' | 'throttled') => s.metrics.secondFactorAttempts.inc({ method, outcome });
    const client = clientAddress(req);
    const gate = await throttle.before(client, factors.user_id);
    if ('refused' in gate) {
      const wait = gate.refused.retryAfterSeconds;
      res.setHeader('Retry-After', String(wait));
      req.log.info({ component: 'dashboard', user: factors.user_id }, 'dashboard second factor throttled');
      count('throttled');
      return verifyPage(req, res, 429, `Too many attempts. Please try again in ${Math.ceil(wait / 60) <= 1 ? 'a minute' : `${Math.ceil(wait / 60)} minutes`}.`);
    }
    if (gate.delayMs > 0) await new Promise((done) => setTimeout(done, gate.delayMs));
    if (!(await check())) {
      await throttle.failed(client, factors.user_id);
      count('refused');
      req.log.info({ component: 'dashboard', user: factors.user_id }, 'dashboard second factor refused');
      if ((await stepFailed(s.sql, step.token_hash, MAX_FAILURES)) >= MAX_FAILURES) return backToPassword(req, res, 'too_many_codes');
      return verifyPage(req, res, 401, wrong);
    }
    await throttle.succeeded(client, factors.user_id);
    count('accepted');
    if (!(await finish(req, res))) return;
    req.log.info({ component: 'dashboard', user: factors.user_id, account: factors.account_id }, 'dashboard sign-in');
    res.redirect(303, '/dashboard');
  };

  r.get('/two-factor', load('verify'), (req, res) => verifyPage(req, res));

  r.post('/two-factor', load('verify'), (req, res) => {
    const { factors } = stepOf(res);
    const code = formText((req.body as Record<string, unknown>).code);
    return attempt(req, res, 'code', async () => (await checkSecondFactor(s.sql, actor(req, factors), code)).ok, 'That code is not right, or was used already. Enter the code your app shows now.');
  });

  r.post('/two-factor/passkey', load('verify'), (req, res) => {
    const { factors } = stepOf(res);
    const credential = formText((req.body as Record<string, unknown>).credential);
    return attempt(req, res, 'passkey', () => checkPasskey(s.sql, rp(factors), factors.user_id, credential), 'That passkey was not accepted. Try again.');
  });

  // ---- enrol: the account requires two-factor and the user has none yet.

  const enrol = async (req: Request, res: Response, extra: Partial<EnrolView> = {}, status = 200) => {
    const { step, factors } = stepOf(res);
    sendHtml(
      res,
      status,
      enrolPage({
        csrf: await csrf.token(req, res, scope(step)),
        email: factors.email,
        registerOptions: await registrationOptions(s.sql, rp(factors), actor(req, factors)),
        scripts: deps.scripts,
        totpPending: factors.totp_pending,
        ...extra,
      }),
    );
  };

  r.get('/enrol', load('enrol'), (req, res) => enrol(req, res));

  r.post('/enrol/totp', load('enrol'), async (req, res) => {
    const { factors } = stepOf(res);
    const setup = await beginTotp(s.sql, actor(req, factors), factors.business_name ?? 'Payments dashboard');
    if (!setup) return backToPassword(req, res);
    await enrol(req, res, { totpSetup: await totpSetupOf(setup) });
  });

  r.post('/enrol/totp/confirm', load('enrol'), async (req, res) => {
    const { factors } = stepOf(res);
    const codes = await confirmTotp(s.sql, actor(req, factors), formText((req.body as Record<string, unknown>).code));
    if (!codes) return enrol(req, res, { totpPending: true, error: 'That code is not right. Enter the six digits your app shows now.' }, 400);
    if (!(await finish(req, res))) return;
    req.log.info({ component: 'dashboard', user: factors.user_id, account: factors.account_id }, 'dashboard sign-in after two-factor enrolment');
    sendHtml(res, 200, enrolDonePage(codes));
  });

  r.post('/enrol/passkey', load('enrol'), async (req, res) => {
    const { factors } = stepOf(res);
    const body = req.body as Record<string, unknown>;
    const done = await addPasskey(s.sql, rp(factors), actor(req, factors), formText(body.credential), formText(body.name));
    if (!done.ok) return enrol(req, res, { passkeyError: done.problem }, 400);
    if (!(await finish(req, res))) return;
    req.log.info({ component: 'dashboard', user: factors.user_id, account: factors.account_id }, 'dashboard sign-in after two-factor enrolment');
    res.redirect(303, '/dashboard');
  });

  return r;
}
