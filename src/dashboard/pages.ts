import express, { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import { isDatabaseUnavailable } from '../lib/dependencies.ts';
import { clientAddress, createCsrf, formText, hostedPageSecurity, refuseUnreadableInput } from '../pages/index.ts';
import type { Services } from '../services.ts';
import { homeNumbers } from './home.ts';
import { dummyHash, hashPassword, passwordProblem, verifyPassword, PASSWORD_MAX } from './password.ts';
import { addUser, setPasswordUrl } from './service.ts';
import {
  deleteSession,
  findPasswordToken,
  findSession,
  hashToken,
  insertSession,
  listUsers,
  setSessionMode,
  usePasswordToken,
  usersForSignIn,
  type SessionRow,
} from './store.ts';
import { signInThrottle } from './throttle.ts';
import { DASH_CSS_HASH, homeBody, messagePage, setPasswordPage, shellPage, signInPage, usersBody, type UsersView } from './views.ts';

export const DASHBOARD_PATH = '/dashboard';
export const SESSION_COOKIE = 'dash_session';
const SIGN_IN = `${DASHBOARD_PATH}/sign-in`;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** The generic answer to a failed sign-in: it never says whether the email is a user. */
export const SIGN_IN_FAILED = 'Email or password is incorrect.';
const FORM_EXPIRED = 'This form has expired. Reload the page and try again.';

const CSRF_SIGN_IN = 'dashboard-sign-in';
const CSRF_SET_PASSWORD = 'dashboard-set-password';
/** The CSRF scope of a signed-in user's forms: their session. */
const sessionScope = (session: SessionRow) => `dashboard:${session.token_hash.toString('hex')}`;

/** Where a form may send the user back to (the pages of the dashboard's navigation). */
const BACK = /^\/dashboard(\/users)?$/;

type Locals = { session?: SessionRow; sessionTokenHash?: Buffer };
const locals = (res: Response) => res.locals as Locals;

/**
 * The merchant dashboard at /dashboard (issue 14): sign-in with a password, sessions in
 * Postgres behind an HttpOnly cookie, a one-time link to choose a password, the test/live
 * switch and the Home page. Server-rendered, no script, a strict CSP; every form carries a CSRF
 * token, every query filters on the session's account and mode. A request without a valid
 * session, to any path under /dashboard, is sent to the sign-in page (303).
 */
export function dashboardRouter(s: Services): Router {
  const r = Router();
  const cfg = s.config.dashboard;
  const csrf = createCsrf(s.sql);
  const throttle = signInThrottle(s);
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const send = (res: Response, status: number, body: string) => res.status(status).type('html').send(body);
  const secureCookie = (req: Request) => req.secure || s.config.publicBaseUrl.startsWith('https:');
  const cookieOptions = (req: Request) => ({ path: DASHBOARD_PATH, httpOnly: true, sameSite: 'lax' as const, secure: secureCookie(req) });

  // The hosted pages' headers (strict CSP, no-store), with the dashboard's own stylesheet.
  r.use(hostedPageSecurity(DASH_CSS_HASH));
  r.use(form);

  // The session of the cookie, if any and still within both limits.
  r.use(async (req, res, next) => {
    const token = parseCookie(req.headers.cookie ?? '')[SESSION_COOKIE];
    if (token && TOKEN.test(token)) {
      locals(res).sessionTokenHash = hashToken(token);
      const session = await findSession(s.sql, token, cfg.sessionIdleSeconds, cfg.sessionMaxSeconds);
      if (session) locals(res).session = session;
    }
    next();
  });
  r.use((req, res, next) => {
    if (refuseUnreadableInput(req, res, ['password', 'confirm'])) return;
    next();
  });

  const clearSessionCookie = (req: Request, res: Response) =>
    res.append('Set-Cookie', stringifySetCookie(SESSION_COOKIE, '', { ...cookieOptions(req), maxAge: 0 }));

  // ---- Signed out: sign-in and the one-time set-password link.

  const NOTICES: Record<string, string> = {
    password_set: 'Your password is set. Sign in with it.',
    signed_out: 'You are signed out.',
  };

  r.get('/sign-in', async (req, res) => {
    if (locals(res).session) return res.redirect(303, DASHBOARD_PATH);
    const notice = Object.keys(NOTICES).find((k) => req.query[k] === '1');
    send(res, 200, signInPage({ csrf: await csrf.token(req, res, CSRF_SIGN_IN), notice: notice ? NOTICES[notice] : null }));
  });

  r.post('/sign-in', async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const email = formText(body.email).trim().slice(0, 254);
    const password = formText(body.password);
    const again = async (status: number, error: string) =>
      send(res, status, signInPage({ csrf: await csrf.token(req, res, CSRF_SIGN_IN), email, error }));
    if (!(await csrf.verify(req, CSRF_SIGN_IN))) return again(403, FORM_EXPIRED);
    const wait = await throttle.take(clientAddress(req), email);
    if (wait !== null) {
      res.setHeader('Retry-After', String(wait));
      const minutes = Math.ceil(wait / 60);
      req.log.info({ component: 'dashboard' }, 'dashboard sign-in throttled');
      return again(429, `Too many sign-in attempts. Please try again in ${minutes === 1 ? 'a minute' : `${minutes} minutes`}.`);
    }
    // The same work whether or not the email is a user: a dummy hash is verified when none is.
    const candidates = email && password.length <= PASSWORD_MAX ? await usersForSignIn(s.sql, email) : [];
    let user = null;
    for (const u of candidates) {
      if (await verifyPassword(password, u.password_hash!)) {
        user ??= u;
      }
    }
    if (!candidates.length) await verifyPassword(password.slice(0, PASSWORD_MAX), await dummyHash());
    if (!user) {
      req.log.info({ component: 'dashboard' }, 'dashboard sign-in refused');
      return again(401, SIGN_IN_FAILED);
    }
    // A new session on every sign-in; the one the browser came with (if any) ends.
    const old = locals(res).sessionTokenHash;
    if (old) await deleteSession(s.sql, old);
    const token = await insertSession(s.sql, user.id);
    res.append('Set-Cookie', stringifySetCookie(SESSION_COOKIE, token, { ...cookieOptions(req), maxAge: cfg.sessionMaxSeconds }));
    req.log.info({ component: 'dashboard', user: user.id, account: user.account_id }, 'dashboard sign-in');
    res.redirect(303, DASHBOARD_PATH);
  });

  const linkGone = (res: Response) =>
    send(res, 410, messagePage('This link no longer works', 'A link to choose a password works once and for a limited time. Ask someone of your team for a new one.'));

  r.get('/set-password', async (req, res) => {
    const token = formText(req.query.token);
    const user = TOKEN.test(token) ? await findPasswordToken(s.sql, token) : null;
    if (!user) return linkGone(res);
    send(res, 200, setPasswordPage({ csrf: await csrf.token(req, res, CSRF_SET_PASSWORD), token, email: user.email }));
  });

  r.post('/set-password', async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const token = formText(body.token);
    const password = formText(body.password);
    const user = TOKEN.test(token) ? await findPasswordToken(s.sql, token) : null;
    if (!user) return linkGone(res);
    const again = async (status: number, error: string) =>
      send(res, status, setPasswordPage({ csrf: await csrf.token(req, res, CSRF_SET_PASSWORD), token, email: user.email, error }));
    if (!(await csrf.verify(req, CSRF_SET_PASSWORD))) return again(403, FORM_EXPIRED);
    const problem = passwordProblem(password);
    if (problem) return again(400, problem);
    if (password !== formText(body.confirm)) return again(400, 'The two passwords are not the same.');
    const done = await usePasswordToken(s.sql, token, await hashPassword(password));
    if (!done) return linkGone(res);
    req.log.info({ component: 'dashboard', user: done.id }, 'dashboard password set');
    res.redirect(303, `${SIGN_IN}?password_set=1`);
  });

  // ---- Everything else needs a session.

  r.use((req, res, next) => {
    if (locals(res).session) return next();
    if (locals(res).sessionTokenHash) clearSessionCookie(req, res);
    res.redirect(303, SIGN_IN);
  });

  const session = (res: Response) => locals(res).session!;
  /** A signed-in form: refused with a page unless its CSRF token is the session's. */
  const checked =
    (handle: (req: Request, res: Response, session: SessionRow) => Promise<unknown>): RequestHandler =>
    async (req, res) => {
      if (!(await csrf.verify(req, sessionScope(session(res))))) return send(res, 403, messagePage('This form has expired', FORM_EXPIRED));
      await handle(req, res, session(res));
    };
  const ownerOf = (se: SessionRow) => ({ accountId: se.account_id, livemode: se.livemode });

  r.get('/', async (req, res) => {
    const se = session(res);
    const numbers = await homeNumbers(s.sql, ownerOf(se));
    send(res, 200, shellPage(se, await csrf.token(req, res, sessionScope(se)), 'home', 'Home', homeBody(numbers)));
  });

  const usersPage = async (req: Request, res: Response, status: number, extra: Partial<UsersView> = {}) => {
    const se = session(res);
    const token = await csrf.token(req, res, sessionScope(se));
    const users = await listUsers(s.sql, se.account_id);
    send(res, status, shellPage(se, token, 'users', 'Users', usersBody({ users, csrf: token, ...extra })));
  };
  r.get('/users', (req, res) => usersPage(req, res, 200));
  r.post(
    '/users',
    checked(async (req, res, se) => {
      const email = formText((req.body as Record<string, unknown>).email);
      const result = await addUser(s.sql, se.account_id, email, cfg.passwordLinkSeconds);
      if (!result.ok) return usersPage(req, res, 400, { email, error: result.problem });
      req.log.info({ component: 'dashboard', user: se.user_id, invited: result.user.id }, 'dashboard user invited');
      return usersPage(req, res, 200, { link: { email: result.user.email, url: setPasswordUrl(s.config.publicBaseUrl, result.token) } });
    }),
  );

  r.post(
    '/mode',
    checked(async (req, res, se) => {
      const body = req.body as Record<string, unknown>;
      const mode = formText(body.mode);
      if (mode !== 'test' && mode !== 'live') return send(res, 400, messagePage('Please try again', 'The mode must be test or live.'));
      await setSessionMode(s.sql, se.token_hash, mode === 'live');
      const back = formText(body.back);
      res.redirect(303, BACK.test(back) ? back : DASHBOARD_PATH);
    }),
  );

  r.post(
    '/sign-out',
    checked(async (req, res, se) => {
      await deleteSession(s.sql, se.token_hash);
      clearSessionCookie(req, res);
      res.redirect(303, `${SIGN_IN}?signed_out=1`);
    }),
  );

  r.use((_req, res) => send(res, 404, messagePage('Page not found', 'There is no such page in the dashboard.')));
  r.use(dashboardErrors);
  return r;
}

/** The dashboard's last handler: a page, never a JSON body or a stack. */
const dashboardErrors: ErrorRequestHandler = (err, req, res, _next) => {
  const status = (err as { status?: number }).status;
  const page = (code: number, heading: string, message: string) => res.status(code).type('html').send(messagePage(heading, message));
  if (status && status >= 400 && status < 500) return page(status, 'Please try again', 'The form could not be read. Go back and submit it again.');
  if (isDatabaseUnavailable(err)) {
    res.setHeader('Retry-After', '2');
    return page(503, 'Temporarily unavailable', 'We cannot reach our records right now. Please try again in a few seconds.');
  }
  req.log.error({ err }, 'dashboard error');
  return page(500, 'Something went wrong', 'Something went wrong on our side. Please try again in a moment.');
};
