import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import { isDatabaseUnavailable } from '../lib/dependencies.ts';
import { headerOf, setLater } from '../lib/headers.ts';
import { ApiError } from '../lib/errors.ts';
import { scriptAsset } from '../pages/assets.ts';
import { clientAddress, createCsrf, formText, hostedPageSecurity, refuseUnreadableInput, staticScript } from '../pages/index.ts';
import type { Services } from '../services.ts';
import { allow, dashContext, dashLocals, FORM_EXPIRED, FormRefused, sessionScope, type DashContext } from './context.ts';
import { apiKeysPages } from './api-keys/pages.ts';
import { checkoutSessionsPages } from './checkout/pages.ts';
import { customersPages } from './customers/pages.ts';
import { eventsPages } from './events/pages.ts';
import { homePages } from './home/pages.ts';
import { invoicesPages } from './invoices/pages.ts';
import { paymentLinksPages } from './payment-links/pages.ts';
import { paymentsPages } from './payments/pages.ts';
import { securityPages } from './security/pages.ts';
import { afterPassword, secondStepRouter } from './security/sign-in.ts';
import { settingsPages } from './settings/pages.ts';
import { webhooksPages } from './webhooks/pages.ts';
import { html, sendHtml } from '../pages/html.ts';
import { DASH_CSS_HASH, DASH_SCRIPT_PATH, messagePage, sectionOf, sectionPath } from './layout.ts';
import { dummyHash, hashPassword, passwordProblem, verifyPassword, PASSWORD_MAX } from './password.ts';
import { deleteSession, findPasswordToken, findSession, hashToken, setSessionMode, usePasswordToken, usersForSignIn } from './store.ts';
import { auditFailedSignIn, startAuditedSession } from './sign-in-audit.ts';
import { signInThrottle } from './throttle.ts';
import { teamPages } from './team/pages.ts';
import { auditLogPages } from './audit-log/pages.ts';
import { searchPages } from './search/pages.ts';
import { fraudPages } from './fraud/pages.ts';
import { exportsPages } from './exports/pages.ts';
import { reportsPages } from './reports/pages.ts';
import { setPasswordPage, signInPage } from './views.ts';
import { alertBox, card } from './widgets.ts';

export const DASHBOARD_PATH = '/dashboard';
export const SESSION_COOKIE = 'dash_session';
const SIGN_IN = `${DASHBOARD_PATH}/sign-in`;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** The generic answer to a failed sign-in: it never says whether the email is a user. */
export const SIGN_IN_FAILED = 'Email or password is incorrect.';
const CSRF_SIGN_IN = 'dashboard-sign-in';
const CSRF_SET_PASSWORD = 'dashboard-set-password';

/** Where the mode switch may send the user back to: the first page of a section. */
const BACK = /^\/dashboard(\/[a-z-]+)?$/;

const script = staticScript(new URL('./assets/dashboard.js', import.meta.url));
const SCRIPT_URL = `${DASH_SCRIPT_PATH}?${script.version}`;
// Passkeys (issue 25): @simplewebauthn/browser's bundle, served from here as ours is (no CDN), and our script that uses it.
const webauthnLibrary = scriptAsset(
  readFileSync(new URL('../dist/bundle/index.umd.min.js', pathToFileURL(createRequire(import.meta.url).resolve('@simplewebauthn/browser')))),
);
const passkeysScript = staticScript(new URL('./assets/passkeys.js', import.meta.url));
const PASSKEY_SCRIPTS = {
  library: `${DASHBOARD_PATH}/assets/webauthn.js?${webauthnLibrary.version}`,
  passkeys: `${DASHBOARD_PATH}/assets/passkeys.js?${passkeysScript.version}`,
};
const locals = dashLocals;

/**
 * The sections of the dashboard, each a router of its own folder, mounted here and nowhere else
 * (in the order of the navigation, layout.ts). Every one is given the same context.
 */
export const SECTIONS: Array<[string, (ctx: DashContext) => Router]> = [
  ['/', homePages],
  ['/payments', paymentsPages],
  ['/checkout-sessions', checkoutSessionsPages],
  ['/payment-links', paymentLinksPages],
  ['/customers', customersPages],
  ['/invoices', invoicesPages],
  ['/events', eventsPages],
  ['/webhooks', webhooksPages],
  ['/api-keys', apiKeysPages],
  ['/settings', settingsPages],
  ['/security', (ctx) => securityPages(ctx, PASSKEY_SCRIPTS)],
  ['/team', teamPages],
  ['/audit-log', auditLogPages],
  ['/search', searchPages],
  ['/exports', exportsPages],
  ['/reports', reportsPages],
  ['/fraud', fraudPages],
];

/**
 * The merchant dashboard at /dashboard (issue 14): sign-in with a password, sessions in
 * Postgres behind an HttpOnly cookie, a one-time link to choose a password, the test/live
 * switch, and the sections. Server-rendered, a strict CSP (one script of our own, for the copy
 * buttons); every form carries a CSRF token, every query filters on the session's account and
 * mode, and every change goes through the services of the API (context.ts `action`). A request
 * without a valid session, to any path under /dashboard, is sent to the sign-in page (303).
 */
export function dashboardRouter(s: Services): Router {
  const r = Router();
  const cfg = s.config.dashboard;
  const csrf = createCsrf(s.sql);
  const throttle = signInThrottle(s);
  // Forms: small ones for whoever is signed out (sign-in, set-password); a signed-in user's forms
  // may be larger (a dispute's evidence: 18 fields of up to 20,000 characters).
  const publicForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  // The second step's forms may carry a passkey's answer (a few kilobytes of JSON).
  const stepForm = express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 20 });
  const signedInForm = express.urlencoded({ extended: false, limit: '1mb', parameterLimit: 200 });
  const secureCookie = (req: Request) => req.secure || s.config.publicBaseUrl.startsWith('https:');
  const cookieOptions = (req: Request) => ({ path: DASHBOARD_PATH, httpOnly: true, sameSite: 'lax' as const, secure: secureCookie(req) });

  const ctx = dashContext(s, csrf, SCRIPT_URL);

  // The hosted pages' headers (strict CSP, no-store), with the dashboard's own stylesheet and script.
  const security = hostedPageSecurity(DASH_CSS_HASH);
  r.use((req, res, next) =>
    security(req, res, () => {
      setLater(res, 'Content-Security-Policy', `${headerOf(res, 'Content-Security-Policy') ?? ''};script-src 'self'`);
      next();
    }),
  );
  r.get('/assets/dashboard.js', script.handler);
  r.get('/assets/webauthn.js', webauthnLibrary.handler);
  r.get('/assets/passkeys.js', passkeysScript.handler);

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
  // Without a session only the sign-in and set-password forms are read; any other post goes to sign-in unread.
  r.use((req, res, next) => {
    if (locals(res).session) return signedInForm(req, res, next);
    if (req.path === '/sign-in' || req.path === '/set-password') return publicForm(req, res, next);
    if (req.path.startsWith('/sign-in/')) return stepForm(req, res, next);
    next();
  });
  r.use((req, res, next) => {
    if (refuseUnreadableInput(req, res, ['password', 'confirm'])) return;
    next();
  });

  /** A new session on every sign-in; the one the browser came with (if any) ends. */
  const openSession = async (req: Request, res: Response, userId: string) => {
    const old = locals(res).sessionTokenHash;
    if (old) await deleteSession(s.sql, old);
    const token = await startAuditedSession(s.sql, userId, clientAddress(req));
    res.append('Set-Cookie', stringifySetCookie(SESSION_COOKIE, token, { ...cookieOptions(req), maxAge: cfg.sessionMaxSeconds }));
  };

  const clearSessionCookie = (req: Request, res: Response) =>
    res.append('Set-Cookie', stringifySetCookie(SESSION_COOKIE, '', { ...cookieOptions(req), maxAge: 0 }));

  // ---- Signed out: sign-in and the one-time set-password link.

  const NOTICES: Record<string, string> = {
    password_set: 'Your password is set. Sign in with it.',
    signed_out: 'You are signed out.',
    step_expired: 'Your sign-in took too long or was already used. Sign in again.',
    too_many_codes: 'Too many wrong codes. Sign in again.',
  };

  r.get('/sign-in', async (req, res) => {
    if (locals(res).session) return res.redirect(303, DASHBOARD_PATH);
    const notice = Object.keys(NOTICES).find((k) => req.query[k] === '1');
    sendHtml(res, 200, signInPage({ csrf: await csrf.token(req, res, CSRF_SIGN_IN), notice: notice ? NOTICES[notice] : null }));
  });

  r.post('/sign-in', async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const email = formText(body.email).trim().slice(0, 254);
    const password = formText(body.password);
    const again = async (status: number, error: string) =>
      sendHtml(res, status, signInPage({ csrf: await csrf.token(req, res, CSRF_SIGN_IN), email, error }));
    if (!(await csrf.verify(req, CSRF_SIGN_IN))) return again(403, FORM_EXPIRED);
    const client = clientAddress(req);
    const gate = await throttle.before(client, email);
    if ('refused' in gate) {
      const wait = gate.refused.retryAfterSeconds;
      res.setHeader('Retry-After', String(wait));
      const minutes = Math.ceil(wait / 60);
      req.log.info({ component: 'dashboard' }, 'dashboard sign-in throttled');
      return again(429, `Too many sign-in attempts. Please try again in ${minutes === 1 ? 'a minute' : `${minutes} minutes`}.`);
    }
    if (gate.delayMs > 0) {
      // Many wrong passwords for this email from anywhere: slowed, never refused (throttle.ts).
      req.log.info({ component: 'dashboard', delayMs: gate.delayMs }, 'dashboard sign-in slowed');
      await new Promise((r) => setTimeout(r, gate.delayMs));
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
      await throttle.failed(client, email);
      await auditFailedSignIn(s.sql, candidates, client);
      req.log.info({ component: 'dashboard' }, 'dashboard sign-in refused');
      return again(401, SIGN_IN_FAILED);
    }
    await throttle.succeeded(client, email);
    // A second factor to give (or, where the account requires one, to set up) before any session (issue 25).
    const step = await afterPassword(s, req, res, user.id, cookieOptions(req));
    if (step) return res.redirect(303, step);
    await openSession(req, res, user.id);
    req.log.info({ component: 'dashboard', user: user.id, account: user.account_id }, 'dashboard sign-in');
    res.redirect(303, DASHBOARD_PATH);
  });

  r.use('/sign-in', secondStepRouter(s, { csrf, scripts: PASSKEY_SCRIPTS, cookieOptions, openSession }));

  const linkGone = (res: Response) =>
    sendHtml(res, 410, messagePage('This link no longer works', 'A link to choose a password works once and for a limited time. Ask someone of your team for a new one.'));

  r.get('/set-password', async (req, res) => {
    const token = formText(req.query.token);
    const user = TOKEN.test(token) ? await findPasswordToken(s.sql, token) : null;
    if (!user) return linkGone(res);
    sendHtml(res, 200, setPasswordPage({ csrf: await csrf.token(req, res, CSRF_SET_PASSWORD), token, email: user.email }));
  });

  r.post('/set-password', async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const token = formText(body.token);
    const password = formText(body.password);
    const user = TOKEN.test(token) ? await findPasswordToken(s.sql, token) : null;
    if (!user) return linkGone(res);
    const again = async (status: number, error: string) =>
      sendHtml(res, status, setPasswordPage({ csrf: await csrf.token(req, res, CSRF_SET_PASSWORD), token, email: user.email, error }));
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

  const checked = (handle: (req: Request, res: Response) => Promise<unknown>) => async (req: Request, res: Response) => {
    if (!(await csrf.verify(req, sessionScope(ctx.session(res))))) throw new FormRefused(403, 'This form has expired', FORM_EXPIRED);
    await handle(req, res);
  };

  r.post(
    '/mode',
    allow('read'),
    checked(async (req, res) => {
      const se = ctx.session(res);
      const body = req.body as Record<string, unknown>;
      const mode = formText(body.mode);
      if (mode !== 'test' && mode !== 'live') return sendHtml(res, 400, messagePage('Please try again', 'The mode must be test or live.'));
      await setSessionMode(s.sql, se.token_hash, mode === 'live');
      const back = formText(body.back);
      res.redirect(303, BACK.test(back) ? back : DASHBOARD_PATH);
    }),
  );

  r.post(
    '/sign-out',
    allow('read'),
    checked(async (req, res) => {
      const se = ctx.session(res);
      await deleteSession(s.sql, se.token_hash);
      clearSessionCookie(req, res);
      res.redirect(303, `${SIGN_IN}?signed_out=1`);
    }),
  );

  for (const [path, section] of SECTIONS) r.use(path, section(ctx));

  r.use((_req, _res) => {
    throw new FormRefused(404, 'Page not found', 'There is no such page in the dashboard.');
  });
  r.use(dashboardErrors(ctx));
  return r;
}

/** What an error of the API's services says in the dashboard, by its code. */
const HEADINGS: Partial<Record<ApiError['code'], string>> = {
  resource_missing: 'Not found',
  route_not_found: 'Page not found',
  parameter_invalid: 'Please check what you entered',
  parameter_unknown: 'Please check what you entered',
  parameter_missing: 'Please check what you entered',
  resource_invalid_state: 'This cannot be done now',
  idempotency_key_in_progress: 'Still working',
};

/**
 * The dashboard's last handler: a page, never a JSON body or a stack. A signed-in user gets it in
 * the shell (the error of an API service says what the API would have said: an unknown id is a
 * 404, a bad filter a 400 naming it); anyone else a plain page.
 */
function dashboardErrors(ctx: DashContext): ErrorRequestHandler {
  return (err, req, res, _next) => {
    let status = 500;
    let heading = 'Something went wrong';
    let message = 'Something went wrong on our side. Please try again in a moment.';
    if (err instanceof FormRefused) {
      [status, heading, message] = [err.status, err.heading, err.message];
    } else if (err instanceof ApiError && err.status < 500) {
      [status, heading, message] = [err.status, HEADINGS[err.code] ?? 'This cannot be done', err.message];
    } else if (isDatabaseUnavailable(err)) {
      res.setHeader('Retry-After', '2');
      [status, heading, message] = [503, 'Temporarily unavailable', 'We cannot reach our records right now. Please try again in a few seconds.'];
    } else if ((err as { status?: number }).status && (err as { status: number }).status < 500) {
      // A body-parser refusal: an oversized or malformed form.
      [status, heading, message] = [(err as { status: number }).status, 'Please try again', 'The form could not be read. Go back and submit it again.'];
    } else {
      req.log.error({ err }, 'dashboard error');
    }
    if (res.headersSent) return;
    const se = locals(res).session;
    if (!se || status === 503) return sendHtml(res, status, messagePage(heading, message));
    ctx
      .render(req, res, () => ({ section: sectionOf(req.originalUrl), title: heading, body: card(null, html`${alertBox(status >= 500 ? 'error' : 'info', message)}<p><a href="${sectionPath('home')}">Back to Home</a></p>`) }), status)
      .catch(() => sendHtml(res, status, messagePage(heading, message)));
  };
}
