import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { isId, type IdPrefix } from '../lib/ids.ts';
import { refundsOfPayment } from '../refunds/store.ts';
import { startCardUpdate } from '../installments/service.ts';
import { ApiError } from '../lib/errors.ts';
import { processorFor } from '../processor/select.ts';
import { allowFormTargets, hostedPageErrors, hostedPageSecurity, sendHtml } from '../pages/index.ts';
import type { Services } from '../services.ts';
import { locals, NO_BRAND, portalContext, sessionScope } from './context.ts';
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
import { signInRoutes } from './sign-in.ts';
import { scopeOf, type PortalScope } from './store.ts';
import * as views from './views.ts';
import type { SignedInView } from './views.ts';

export { PORTAL_PATH } from './context.ts';

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
  const ctx = portalContext(s);
  const { csrf } = ctx;

  r.use(hostedPageSecurity(PORTAL_STYLE_HASHES));
  r.use(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }));
  r.use('/:account', ctx.load);

  // ---- Signed out: the form, the link by email, the link spent (sign-in.ts).
  signInRoutes(r, ctx);

  // ---- Everything else needs a session of this account.

  r.use('/:account', (req, res, next) => {
    if (locals(res).session) return next();
    if (locals(res).staleCookie) ctx.clearCookie(req, res);
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
    sendHtml(res, 404, views.portalMessagePage(view, 'Not found', `There is no such ${what} in your account.`, { href: view.base, label: 'Back to your account' }));
  };

  /** `?older_than=<id>` of a list page: the id, undefined on the first page, null (answered 400) when it cannot be one. */
  const cursor = (req: Request, res: Response, prefix: IdPrefix): string | undefined | null => {
    const v = req.query.older_than;
    if (v === undefined) return undefined;
    if (typeof v === 'string' && isId(prefix, v)) return v;
    sendHtml(res, 400, views.portalMessagePage(locals(res).view, 'Please check the link', 'The “older_than” part of this link is not valid.', { href: locals(res).view.base, label: 'Back to your account' }));
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
    sendHtml(res, 200, views.homePage(v, {
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
    sendHtml(res, 200, views.paymentsPage(v, page, rows.length > PAGE_SIZE ? page.at(-1)!.id : null, older === undefined, plans));
  });

  r.get('/:account/payments/:id', async (req, res) => {
    const id = String(req.params.id);
    const p = isId('pay', id) ? await customerPayment(s.sql, scope(res), id) : undefined;
    if (!p) return notFound(res, 'payment');
    const refunds = await refundsOfPayment(s.sql, scope(res), p.id);
    const { v, plans } = await signedIn(req, res);
    sendHtml(res, 200, views.paymentPage(v, p, refunds, plans));
  });

  r.get('/:account/invoices', async (req, res) => {
    const older = cursor(req, res, 'in');
    if (older === null) return;
    const rows = await customerInvoices(s.sql, scope(res), PAGE_SIZE + 1, { olderThan: older });
    const page = rows.slice(0, PAGE_SIZE);
    const { v, plans } = await signedIn(req, res);
    sendHtml(res, 200, views.invoicesPage(v, page, rows.length > PAGE_SIZE ? page.at(-1)!.id : null, older === undefined, plans));
  });

  r.get('/:account/invoices/:id', async (req, res) => {
    const id = String(req.params.id);
    const inv = isId('in', id) ? await customerInvoice(s.sql, scope(res), id) : undefined;
    if (!inv) return notFound(res, 'invoice');
    const { v, plans } = await signedIn(req, res);
    sendHtml(res, 200, views.invoicePage(v, inv, plans));
  });

  r.get('/:account/plans', async (req, res) => {
    const rows = await customerPlans(s.sql, scope(res), 100);
    const { v } = await signedIn(req, res);
    sendHtml(res, 200, views.plansPage(v, rows));
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
    sendHtml(res, 200, views.planPage(v, plan, schedule, canUpdate ? { csrf: v.csrf } : null, notice));
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
      return sendHtml(res, 403, views.portalMessagePage(view, 'This form has expired', 'Go back, reload the page and try again.', { href: page, label: 'Back to the plan' }));
    }
    if (plan.status !== 'ACTIVE' || !cardUpdateAvailable(view.livemode)) {
      return sendHtml(res, 409, views.portalMessagePage(view, 'The card cannot be replaced', `Only the card of an active plan can be replaced here. For anything else, please contact ${view.brand.business_name ?? 'the merchant'}.`, { href: page, label: 'Back to the plan' }));
    }
    try {
      const started = await startCardUpdate(s, scope(res), plan.id, `${s.config.publicBaseUrl}${page}?card=back`);
      req.log.info({ component: 'portal', plan: plan.id, session: started.session.id }, 'portal card update started');
      allowFormTargets(res, [started.url]);
      res.redirect(303, started.url);
    } catch (err) {
      // The plan changed meanwhile (no longer active, gone): the page says so, as the API would.
      if (err instanceof ApiError && err.status < 500) {
        return sendHtml(res, err.status, views.portalMessagePage(view, 'The card cannot be replaced', err.message, { href: page, label: 'Back to the plan' }));
      }
      throw err;
    }
  });

  r.use(((_req, res) => {
    if (res.locals.view) return notFound(res, 'page');
    sendHtml(res, 404, views.portalMessagePage({ brand: NO_BRAND }, 'Page not found', 'There is no such page.'));
  }) as RequestHandler);
  r.use(hostedPageErrors);
  return r;
}
