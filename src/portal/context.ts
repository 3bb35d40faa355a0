import type { Request, RequestHandler, Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import { isId } from '../lib/ids.ts';
import { allowBrand, createCsrf, refuseUnreadableInput, sendHtml, type Csrf } from '../pages/index.ts';
import type { Services } from '../services.ts';
import { verifyReturn } from './service.ts';
import { findAccountBrand, findPortalSession, type PortalSessionRow } from './store.ts';
import * as views from './views.ts';
import type { PortalView, SignInForm } from './views.ts';

/**
 * What the portal's routers share (pages.ts builds it once): the account of the URL and the
 * session of the cookie (`load`), the cookie itself, CSRF scopes and the signed-out form.
 */

export const PORTAL_PATH = '/portal';
/** The session cookie: `<token>`, or `<token>.<return URL, base64url>.<its signature>` when the link carried one. */
export const PORTAL_COOKIE = 'portal_session';
export const TOKEN = /^[A-Za-z0-9_-]{43}$/;
export const FORM_EXPIRED = 'This form has expired. Please submit it again.';
export const NO_BRAND = { business_name: null, brand_color: null, logo_url: null, support_email: null };

/** What the loader leaves for the routes of one account's portal. */
export interface PortalLocals {
  accountId: string;
  view: PortalView;
  session?: PortalSessionRow;
  returnUrl: string | null;
  /** A session cookie came that names no live session of this account (cleared on the way out). */
  staleCookie: boolean;
}
export const locals = (res: Response): PortalLocals => res.locals as unknown as PortalLocals;

/** The CSRF scopes: the signed-out form of an account's portal, and a signed-in customer's forms (their session). */
export const signedOutScope = (accountId: string) => `portal:${accountId}`;
export const sessionScope = (se: PortalSessionRow) => `portal-session:${se.token_hash.toString('hex')}`;

export interface PortalContext {
  s: Services;
  csrf: Csrf;
  /** The account of the URL (404 when there is none), its branding, and the session of the cookie. */
  load: RequestHandler;
  /** The signed-out form of the mode given, with its token. */
  signInForm(req: Request, res: Response, f?: Omit<SignInForm, 'csrf'>): Promise<SignInForm>;
  modeView(res: Response, livemode: boolean): PortalView;
  /** Sets the session cookie of a new session (`value`: the token, with its return URL if any). */
  setSessionCookie(req: Request, res: Response, value: string): void;
  clearCookie(req: Request, res: Response): void;
}

export function portalContext(s: Services): PortalContext {
  const cfg = s.config.portal;
  const csrf = createCsrf(s.sql);
  const secure = (req: Request) => req.secure || s.config.publicBaseUrl.startsWith('https:');
  const cookieOptions = (req: Request, accountId: string) => ({ path: `${PORTAL_PATH}/${accountId}`, httpOnly: true, sameSite: 'lax' as const, secure: secure(req) });

  const load: RequestHandler = async (req, res, next) => {
    const accountId = String(req.params.account);
    const brand = isId('acct', accountId) ? await findAccountBrand(s.sql, accountId) : undefined;
    if (!brand) {
      return sendHtml(res, 404, views.portalMessagePage({ brand: NO_BRAND }, 'Page not found', 'There is no such page.'));
    }
    allowBrand(res, brand);
    const l: PortalLocals = { accountId, view: { brand, base: `${PORTAL_PATH}/${accountId}`, livemode: true }, returnUrl: null, staleCookie: false };
    Object.assign(res.locals, l);
    const cookie = parseCookie(req.headers.cookie ?? '')[PORTAL_COOKIE];
    if (cookie) {
      const [token = '', back, sig] = cookie.split('.');
      const session = TOKEN.test(token) ? await findPortalSession(s.sql, accountId, token, cfg.sessionIdleSeconds, cfg.sessionMaxSeconds) : null;
      if (session) {
        Object.assign(locals(res), { session, view: { ...l.view, livemode: session.livemode } });
        const url = back ? Buffer.from(back, 'base64url').toString('utf8') : '';
        if (url && sig && (await verifyReturn(s, token, url, sig))) locals(res).returnUrl = url;
      } else {
        locals(res).staleCookie = true;
      }
    }
    if (refuseUnreadableInput(req, res)) return;
    next();
  };

  return {
    s,
    csrf,
    load,
    signInForm: async (req, res, f = {}) => ({ ...f, csrf: await csrf.token(req, res, signedOutScope(locals(res).accountId)) }),
    modeView: (res, livemode) => ({ ...locals(res).view, livemode }),
    setSessionCookie: (req, res, value) => {
      res.append('Set-Cookie', stringifySetCookie(PORTAL_COOKIE, value, { ...cookieOptions(req, locals(res).accountId), maxAge: cfg.sessionMaxSeconds }));
    },
    clearCookie: (req, res) => {
      res.append('Set-Cookie', stringifySetCookie(PORTAL_COOKIE, '', { ...cookieOptions(req, locals(res).accountId), maxAge: 0 }));
    },
  };
}
