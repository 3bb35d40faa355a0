import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { clientAddress, formText, sendHtml, throttledAnswer } from '../pages/index.ts';
import { FORM_EXPIRED, locals, sessionScope, signedOutScope, TOKEN, type PortalContext } from './context.ts';
import { emailSignInLinks, signReturn, startPortalSession, verifyReturn } from './service.ts';
import { deletePortalSession, linkCustomer, linkMode } from './store.ts';
import { portalSignInThrottle } from './throttle.ts';
import * as views from './views.ts';
import type { SignInForm } from './views.ts';

const EMAIL = z.email().max(254);

/**
 * The portal's way in and out (issue 16; issue 21): the email form and its one answer, the link
 * spent for a session (asking first when another customer's session is open), and sign-out.
 */
export function signInRoutes(r: Router, ctx: PortalContext): void {
  const { s, csrf } = ctx;
  const throttle = portalSignInThrottle(s);
  const log = s.log.child({ component: 'portal' });


  r.get('/:account', async (req, res, next) => {
    if (locals(res).session) return next(); // the overview (pages.ts)
    const view = ctx.modeView(res, formText(req.query.mode) !== 'test');
    const notice = req.query.signed_out === '1' ? 'You are signed out.' : null;
    if (locals(res).staleCookie) ctx.clearCookie(req, res);
    sendHtml(res, 200, views.signInPage(view, await ctx.signInForm(req, res, { notice })));
  });

  r.post('/:account', async (req, res) => {
    const { accountId } = locals(res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const view = ctx.modeView(res, formText(body.mode) !== 'test');
    const email = formText(body.email).trim();
    const again = async (status: number, f: Omit<SignInForm, 'csrf'>) => sendHtml(res, status, views.signInPage(view, await ctx.signInForm(req, res, { email, ...f })));
    if (!(await csrf.verify(req, signedOutScope(accountId)))) return again(403, { error: FORM_EXPIRED });
    const throttled = await throttle.take(clientAddress(req));
    if (throttled) {
      req.log.info({ component: 'portal', account: accountId }, 'portal sign-in link throttled');
      return again(429, { error: `Too many sign-in links were asked for. ${throttledAnswer(res, throttled)}` });
    }
    if (!EMAIL.safeParse(email).success) return again(400, { fieldError: 'Enter an email address, such as name@example.com.' });
    // The same page, at the same moment, whether or not the email is a customer's and whether or
    // not it had its emails for the hour: the lookup, the links and the email are made after the
    // answer has left (and awaited by a graceful stop).
    sendHtml(res, 200, views.linkSentPage(view, { ...(await ctx.signInForm(req, res)), email }));
    // The plain address serves both modes (a customer made with a test key signs in there too): one
    // email per mode the address is a customer in, each link opening a session of its own mode
    // only. `?mode=test` looks in test mode alone.
    const modes = view.livemode ? [true, false] : [false];
    const work = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        for (const livemode of modes) {
          const { records, sent } = await emailSignInLinks(s, log, { accountId, livemode }, email, () => throttle.mayEmail(email));
          if (records > 0 && !sent) log.info({ account: accountId, livemode, records }, 'portal sign-in link not sent: this address had its emails for the hour');
          else log.info({ account: accountId, livemode, records }, 'portal sign-in link requested');
        }
      })
      .catch((err: unknown) => log.warn({ err, account: accountId }, 'portal sign-in link not sent'))
      .finally(() => s.background.delete(work));
    // Answered but not yet done: a graceful stop (closeServices) lets it finish first.
    s.background.add(work);
  });

  /** The link spent for a new session, which replaces the one the browser came with (if any). */
  async function signIn(req: Request, res: Response, token: string, back: string, sig: string) {
    const { accountId } = locals(res);
    const started = await startPortalSession(s.sql, accountId, token);
    if (!started) return linkGone(req, res, token);
    const old = locals(res).session;
    if (old) await deletePortalSession(s.sql, old.token_hash);
    const ok = back !== '' && (await verifyReturn(s, token, back, sig));
    ctx.setSessionCookie(req, res, ok ? `${started.token}.${Buffer.from(back).toString('base64url')}.${await signReturn(s, started.token, back)}` : started.token);
    req.log.info({ component: 'portal', account: accountId, customer: started.scope.customerId, livemode: started.scope.livemode }, 'portal sign-in');
    res.redirect(303, locals(res).view.base);
  }

  /** A link that does not work: a new one offered in the mode of the old one (a test-mode link stays in test mode). */
  async function linkGone(req: Request, res: Response, token: string) {
    const livemode = TOKEN.test(token) ? ((await linkMode(s.sql, locals(res).accountId, token)) ?? true) : true;
    if (locals(res).staleCookie) ctx.clearCookie(req, res);
    sendHtml(res, 410, views.linkGonePage(ctx.modeView(res, livemode), await ctx.signInForm(req, res)));
  }

  r.get('/:account/sign-in', async (req, res) => {
    // A HEAD (a mail scanner checking the link) must not spend it: Express would run this GET for it.
    if (req.method === 'HEAD') return sendHtml(res, 200, '');
    const token = formText(req.query.token);
    const back = formText(req.query.return_url);
    const sig = formText(req.query.sig);
    if (!TOKEN.test(token)) return linkGone(req, res, token);
    const current = locals(res).session;
    if (current) {
      // Another customer's session is open: their confirmation first (a POST), and the link stays
      // unspent until then, so a link sent by someone else never silently swaps who is signed in.
      const next = await linkCustomer(s.sql, locals(res).accountId, token);
      if (!next) return linkGone(req, res, token);
      if (next.customer_id !== current.customer_id || next.livemode !== current.livemode) {
        const form = { csrf: await csrf.token(req, res, sessionScope(current)), current, next, token, returnUrl: back, sig };
        return sendHtml(res, 200, views.switchCustomerPage(ctx.modeView(res, next.livemode), form));
      }
    }
    await signIn(req, res, token, back, sig);
  });

  // The confirmation of a switch: CSRF of the session it replaces (none open any more: the form has expired).
  r.post('/:account/sign-in', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const token = formText(body.token);
    const { session, view } = locals(res);
    if (!session || !(await csrf.verify(req, sessionScope(session)))) {
      if (locals(res).staleCookie) ctx.clearCookie(req, res);
      return sendHtml(res, 403, views.portalMessagePage(view, 'This form has expired', 'Open the sign-in link from your email again.', { href: view.base, label: 'Back to the portal' }));
    }
    if (!TOKEN.test(token)) return linkGone(req, res, token);
    await signIn(req, res, token, formText(body.return_url), formText(body.sig));
  });

  r.post('/:account/sign-out', async (req, res) => {
    const { session, view } = locals(res);
    if (session) {
      if (!(await csrf.verify(req, sessionScope(session)))) return sendHtml(res, 403, views.portalMessagePage(view, 'This form has expired', 'Go back, reload the page and try again.', { href: view.base, label: 'Back to your account' }));
      await deletePortalSession(s.sql, session.token_hash);
    }
    ctx.clearCookie(req, res);
    res.redirect(303, `${view.base}?signed_out=1${view.livemode ? '' : '&mode=test'}`);
  });
}
