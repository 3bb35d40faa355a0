import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import { z } from 'zod';
import { isId, type IdPrefix } from '../lib/ids.ts';
import { refundsOfPayment } from '../refunds/store.ts';
import { startCardUpdate } from '../installments/service.ts';
import { ApiError } from '../lib/errors.ts';
import { processorFor } from '../processor/select.ts';
import {
  allowBrand,
  allowFormTargets,
  clientAddress,
  createCsrf,
  formText,
  hostedPageErrors,
  hostedPageSecurity,
  refuseUnreadableInput,
  throttledAnswer,
} from '../pages/index.ts';
import type { Services } from '../services.ts';
import { PORTAL_STYLE_HASHES } from './layout.ts';
import {
  customerInvoice,
  customerInvoices,
  customerPayment,
  customerPayments,
  customerPlan,
  customerPlans,
  hasPlans,
  latestCardUpdate,
  PAGE_SIZE,
  planSchedule,
} from './records.ts';
import { emailSignInLinks, signReturn, startPortalSession, verifyReturn } from './service.ts';
import { deletePortalSession, findAccountBrand, findPortalSession, linkMode, scopeOf, type PortalScope, type PortalSessionRow } from './store.ts';
import { portalSignInThrottle } from './throttle.ts';
import * as views from './views.ts';
import type { PortalView, SignedInView, SignInForm } from './views.ts';

export const PORTAL_PATH = '/portal';
/** The session cookie: `<token>`, or `<token>.<return URL, base64url>.<its signature>` when the link carried one. */
export const PORTAL_COOKIE = 'portal_session';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const FORM_EXPIRED = 'This form has expired. Please submit it again.';
const EMAIL = z.email().max(254);
const NO_BRAND = { business_name: null, brand_color: null, logo_url: null, support_email: null };

/** What the loader leaves for the routes of one account's portal. */
interface PortalLocals {
  accountId: string;
  view: PortalView;
  session?: PortalSessionRow;
  returnUrl: string | null;
  /** A session cookie came that names no live session of this account (cleared on the way out). */
  staleCookie: boolean;
}
const locals = (res: Response): PortalLocals => res.locals as unknown as PortalLocals;

/** The CSRF scopes: the signed-out form of an account's portal, and a signed-in customer's forms (their session). */
const signedOutScope = (accountId: string) => `portal:${accountId}`;
const sessionScope = (se: PortalSessionRow) => `portal-session:${se.token_hash.toString('hex')}`;

/**
 * The customer portal at /portal/<account id> (issue 16): a customer asks for a one-time sign-in
 * link by email (the same answer whether or not the email is known; the work runs after the
 * answer), spends it at /sign-in for a session (an HttpOnly cookie scoped to this account's portal,
 * only its hash stored), then sees their own payments, receipts, invoices and installment plans:
 * every query filters on the session's account, mode and customer, and anything else is a 404.
 * Server-rendered in the merchant's branding, no script, the hosted pages' strict CSP, CSRF on
 * every form, no-store.
 */
export function portalRouter(s: Services): Router {
  const r = Router();
  const cfg = s.config.portal;
  const csrf = createCsrf(s.sql);
  const throttle = portalSignInThrottle(s);
  const log = s.log.child({ component: 'portal' });
  const secure = (req: Request) => req.secure || s.config.publicBaseUrl.startsWith('https:');
  const send = (res: Response, status: number, body: string) => res.status(status).type('html').send(body);

  // Link requests answered but not yet done: a graceful stop lets them finish first.
  const pending = new Set<Promise<void>>();
  s.beforeClose.push(async () => {
    await Promise.allSettled([...pending]);
  });

  r.use(hostedPageSecurity(PORTAL_STYLE_HASHES));
  r.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }));

  // The account of the URL (404 when there is none), its branding, and the session of the cookie.
  r.use('/:account', async (req, res, next) => {
    const accountId = String(req.params.account);
    const brand = isId('acct', accountId) ? await findAccountBrand(s.sql, accountId) : undefined;
    if (!brand) {
      return send(res, 404, views.portalMessagePage({ brand: NO_BRAND }, 'Page not found', 'There is no such page.'));
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
  });

  const cookieOptions = (req: Request, accountId: string) => ({ path: `${PORTAL_PATH}/${accountId}`, httpOnly: true, sameSite: 'lax' as const, secure: secure(req) });
  const clearCookie = (req: Request, res: Response) =>
    res.append('Set-Cookie', stringifySetCookie(PORTAL_COOKIE, '', { ...cookieOptions(req, locals(res).accountId), maxAge: 0 }));

  /** The signed-out form of the mode given, with its token. */
  const signInForm = async (req: Request, res: Response, f: Omit<SignInForm, 'csrf'> = {}): Promise<SignInForm> => ({
    ...f,
    csrf: await csrf.token(req, res, signedOutScope(locals(res).accountId)),
  });
  const modeView = (res: Response, livemode: boolean): PortalView => ({ ...locals(res).view, livemode });

  // ---- Signed out: the form, the link by email, the link spent.

  r.get('/:account', async (req, res, next) => {
    if (locals(res).session) return next(); // the overview, below
    const view = modeView(res, formText(req.query.mode) !== 'test');
    const notice = req.query.signed_out === '1' ? 'You are signed out.' : null;
    if (locals(res).staleCookie) clearCookie(req, res);
    send(res, 200, views.signInPage(view, await signInForm(req, res, { notice })));
  });

  r.post('/:account', async (req, res) => {
    const { accountId } = locals(res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const view = modeView(res, formText(body.mode) !== 'test');
    const email = formText(body.email).trim();
    const again = async (status: number, f: Omit<SignInForm, 'csrf'>) => send(res, status, views.signInPage(view, await signInForm(req, res, { email, ...f })));
    if (!(await csrf.verify(req, signedOutScope(accountId)))) return again(403, { error: FORM_EXPIRED });
    const throttled = await throttle.take(clientAddress(req), email);
    if (throttled) {
      req.log.info({ component: 'portal', account: accountId }, 'portal sign-in link throttled');
      return again(429, { error: `Too many sign-in links were asked for. ${throttledAnswer(res, throttled)}` });
    }
    if (!EMAIL.safeParse(email).success) return again(400, { fieldError: 'Enter an email address, such as name@example.com.' });
    // The same page, at the same moment, whether or not the email is a customer's: the lookup, the
    // links and the email are made after the answer has left (and awaited by a graceful stop).
    send(res, 200, views.linkSentPage(view, { ...(await signInForm(req, res)), email }));
    // The plain address serves both modes (a customer made with a test key signs in there too): one
    // email per mode the address is a customer in, each link opening a session of its own mode
    // only. `?mode=test` looks in test mode alone.
    const modes = view.livemode ? [true, false] : [false];
    const work = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        for (const livemode of modes) {
          const records = await emailSignInLinks(s, log, { accountId, livemode }, email);
          log.info({ account: accountId, livemode, records }, 'portal sign-in link requested');
        }
      })
      .catch((err: unknown) => log.warn({ err, account: accountId }, 'portal sign-in link not sent'))
      .finally(() => pending.delete(work));
    pending.add(work);
  });

  r.get('/:account/sign-in', async (req, res) => {
    const { accountId } = locals(res);
    // A HEAD (a mail scanner checking the link) must not spend it: Express would run this GET for it.
    if (req.method === 'HEAD') return send(res, 200, '');
    const token = formText(req.query.token);
    const started = TOKEN.test(token) ? await startPortalSession(s.sql, accountId, token) : null;
    if (!started) {
      // Offered a new link in the mode of the old one (a test-mode link stays in test mode).
      const livemode = TOKEN.test(token) ? ((await linkMode(s.sql, accountId, token)) ?? true) : true;
      if (locals(res).staleCookie) clearCookie(req, res);
      return send(res, 410, views.linkGonePage(modeView(res, livemode), await signInForm(req, res)));
    }
    // A new session on every sign-in; the one the browser came with (if any) ends.
    const old = locals(res).session;
    if (old) await deletePortalSession(s.sql, old.token_hash);
    const back = formText(req.query.return_url);
    const ok = back !== '' && (await verifyReturn(s, token, back, formText(req.query.sig)));
    const value = ok ? `${started.token}.${Buffer.from(back).toString('base64url')}.${await signReturn(s, started.token, back)}` : started.token;
    res.append('Set-Cookie', stringifySetCookie(PORTAL_COOKIE, value, { ...cookieOptions(req, accountId), maxAge: cfg.sessionMaxSeconds }));
    req.log.info({ component: 'portal', account: accountId, customer: started.scope.customerId, livemode: started.scope.livemode }, 'portal sign-in');
    res.redirect(303, locals(res).view.base);
  });

  r.post('/:account/sign-out', async (req, res) => {
    const { session, view } = locals(res);
    if (session) {
      if (!(await csrf.verify(req, sessionScope(session)))) return send(res, 403, views.portalMessagePage(view, 'This form has expired', 'Go back, reload the page and try again.', { href: view.base, label: 'Back to your account' }));
      await deletePortalSession(s.sql, session.token_hash);
    }
    clearCookie(req, res);
    res.redirect(303, `${view.base}?signed_out=1${view.livemode ? '' : '&mode=test'}`);
  });

  // ---- Everything else needs a session of this account.

  r.use('/:account', (req, res, next) => {
    if (locals(res).session) return next();
    if (locals(res).staleCookie) clearCookie(req, res);
    res.redirect(303, locals(res).view.base);
  });

  const scope = (res: Response): PortalScope => scopeOf(locals(res).session!);

  /** The signed-in pages' view: who, the sign-out form's token, the way back, whether to offer Plans. */
  async function signedIn(req: Request, res: Response): Promise<{ v: SignedInView; plans: boolean }> {
    const { session, view, returnUrl } = locals(res);
    const v: SignedInView = {
      ...view,
      csrf: await csrf.token(req, res, sessionScope(session!)),
      customer: session!,
      returnUrl,
      invoiceUrl: s.config.invoiceUrl,
      checkoutUrl: s.config.checkoutUrl,
    };
    return { v, plans: await hasPlans(s.sql, scope(res)) };
  }

  const notFound = (res: Response, what: string) => {
    const { view } = locals(res);
    send(res, 404, views.portalMessagePage(view, 'Not found', `There is no such ${what} in your account.`, { href: view.base, label: 'Back to your account' }));
  };

  /** `?older_than=<id>` of a list page: the id, undefined on the first page, null (answered 400) when it cannot be one. */
  const cursor = (req: Request, res: Response, prefix: IdPrefix): string | undefined | null => {
    const v = req.query.older_than;
    if (v === undefined) return undefined;
    if (typeof v === 'string' && isId(prefix, v)) return v;
    send(res, 400, views.portalMessagePage(locals(res).view, 'Please check the link', 'The “older_than” part of this link is not valid.', { href: locals(res).view.base, label: 'Back to your account' }));
    return null;
  };

  r.get('/:account', async (req, res) => {
    const sc = scope(res);
    const [openInvoices, payments, settledInvoices, plans] = await Promise.all([
      customerInvoices(s.sql, sc, 50, { open: true }),
      customerPayments(s.sql, sc, 6),
      customerInvoices(s.sql, sc, 6, { settled: true }),
      customerPlans(s.sql, sc, 20),
    ]);
    const { v } = await signedIn(req, res);
    send(res, 200, views.homePage(v, {
      openInvoices,
      payments: payments.slice(0, 5),
      morePayments: payments.length > 5,
      settledInvoices: settledInvoices.slice(0, 5),
      moreInvoices: settledInvoices.length > 5,
      plans: plans.length ? plans : null,
    }));
  });

  r.get('/:account/payments', async (req, res) => {
    const older = cursor(req, res, 'pay');
    if (older === null) return;
    const rows = await customerPayments(s.sql, scope(res), PAGE_SIZE + 1, older);
    const page = rows.slice(0, PAGE_SIZE);
    const { v, plans } = await signedIn(req, res);
    send(res, 200, views.paymentsPage(v, page, rows.length > PAGE_SIZE ? page.at(-1)!.id : null, older === undefined, plans));
  });

  r.get('/:account/payments/:id', async (req, res) => {
    const id = String(req.params.id);
    const p = isId('pay', id) ? await customerPayment(s.sql, scope(res), id) : undefined;
    if (!p) return notFound(res, 'payment');
    const refunds = await refundsOfPayment(s.sql, scope(res), p.id);
    const { v, plans } = await signedIn(req, res);
    send(res, 200, views.paymentPage(v, p, refunds, plans));
  });

  r.get('/:account/invoices', async (req, res) => {
    const older = cursor(req, res, 'in');
    if (older === null) return;
    const rows = await customerInvoices(s.sql, scope(res), PAGE_SIZE + 1, { olderThan: older });
    const page = rows.slice(0, PAGE_SIZE);
    const { v, plans } = await signedIn(req, res);
    send(res, 200, views.invoicesPage(v, page, rows.length > PAGE_SIZE ? page.at(-1)!.id : null, older === undefined, plans));
  });

  r.get('/:account/invoices/:id', async (req, res) => {
    const id = String(req.params.id);
    const inv = isId('in', id) ? await customerInvoice(s.sql, scope(res), id) : undefined;
    if (!inv) return notFound(res, 'invoice');
    const { v, plans } = await signedIn(req, res);
    send(res, 200, views.invoicePage(v, inv, plans));
  });

  r.get('/:account/plans', async (req, res) => {
    const rows = await customerPlans(s.sql, scope(res), 100);
    const { v } = await signedIn(req, res);
    send(res, 200, views.plansPage(v, rows));
  });

  r.get('/:account/plans/:id', async (req, res) => {
    const id = String(req.params.id);
    const plan = isId('ip', id) ? await customerPlan(s.sql, scope(res), id) : undefined;
    if (!plan) return notFound(res, 'installment plan');
    const schedule = await planSchedule(s.sql, plan.id);
    const { v } = await signedIn(req, res);
    // Back from the card page (saved or not): what the latest card update of this plan did.
    const notice = req.query.card === 'back' ? await cardUpdateNotice(scope(res), plan.id, views.cardText(plan.card_brand, plan.card_last4)) : null;
    const canUpdate = plan.status === 'ACTIVE' && cardUpdateAvailable(v.livemode);
    if (canUpdate) allowFormTargets(res, [s.config.checkoutUrl]);
    send(res, 200, views.planPage(v, plan, schedule, canUpdate ? { csrf: v.csrf } : null, notice));
  });

  /** The card of an ACTIVE plan can be replaced on the hosted checkout where it collects the card itself (not Stripe's Payment Element yet). */
  const cardUpdateAvailable = (livemode: boolean) => processorFor(s, livemode)?.collectsCard === 'server';

  /** A card saved in the last hour counts as this visit's. */
  async function cardUpdateNotice(sc: PortalScope, planId: string, card: string | null): Promise<views.Notice> {
    const last = await latestCardUpdate(s.sql, sc, planId);
    if (last?.status === 'COMPLETE' && last.completed_at && Date.now() - last.completed_at.getTime() < 3600_000) {
      return { kind: 'success', text: `Your new card is saved${card ? `: ${card}` : ''}. The next payments are taken from it.` };
    }
    return { kind: 'info', text: 'The card was not changed.' };
  }

  // "Replace the card": a setup session of the hosted checkout (installments' startCardUpdate), back here after.
  r.post('/:account/plans/:id/card', async (req, res) => {
    const { session, view } = locals(res);
    const id = String(req.params.id);
    const plan = isId('ip', id) ? await customerPlan(s.sql, scope(res), id) : undefined;
    if (!plan) return notFound(res, 'installment plan');
    const page = `${view.base}/plans/${plan.id}`;
    if (!(await csrf.verify(req, sessionScope(session!)))) {
      return send(res, 403, views.portalMessagePage(view, 'This form has expired', 'Go back, reload the page and try again.', { href: page, label: 'Back to the plan' }));
    }
    if (plan.status !== 'ACTIVE' || !cardUpdateAvailable(view.livemode)) {
      return send(res, 409, views.portalMessagePage(view, 'The card cannot be replaced', `Only the card of an active plan can be replaced here. For anything else, please contact ${view.brand.business_name ?? 'the merchant'}.`, { href: page, label: 'Back to the plan' }));
    }
    try {
      const started = await startCardUpdate(s, scope(res), plan.id, `${s.config.publicBaseUrl}${page}?card=back`);
      req.log.info({ component: 'portal', plan: plan.id, session: started.session.id }, 'portal card update started');
      allowFormTargets(res, [started.url]);
      res.redirect(303, started.url);
    } catch (err) {
      // The plan changed meanwhile (no longer active, gone): the page says so, as the API would.
      if (err instanceof ApiError && err.status < 500) {
        return send(res, err.status, views.portalMessagePage(view, 'The card cannot be replaced', err.message, { href: page, label: 'Back to the plan' }));
      }
      throw err;
    }
  });

  r.use(((_req, res) => {
    if (res.locals.view) return notFound(res, 'page');
    send(res, 404, views.portalMessagePage({ brand: NO_BRAND }, 'Page not found', 'There is no such page.'));
  }) as RequestHandler);
  r.use(hostedPageErrors);
  return r;
}
