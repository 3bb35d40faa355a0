import express, { Router, type Request, type Response } from 'express';
import { getBranding } from '../auth/keys.ts';
import { isId } from '../lib/ids.ts';
import { findPayment, inFlightOfSession } from '../payments/store.ts';
import { refundsOfPayment } from '../refunds/store.ts';
import {
  allowBrand,
  allowFormTargets,
  clientAddress,
  createCsrf,
  formText as str,
  hostedPageErrors,
  hostedPageLimits,
  hostedPageSecurity,
  messagePage,
  pageRoutes,
  throttledAnswer,
  unreadableFields,
} from '../pages/index.ts';
import { sendHtml, type PageBrand } from '../pages/index.ts';
import { parseCardForm, type CardForm } from '../processor/cards.ts';
import { processorFor } from '../processor/select.ts';
import type { Services } from '../services.ts';
import { elementPages, offStatus, refuseLivePayment } from './element.ts';
import { expireOnRead } from './expiry.ts';
import { pageEmail } from './service.ts';
import { finishChallenge, payWithCard, pendingChallenge, type PayResult } from './pay.ts';
import { findSetup, finishSetupChallenge, setupWithCard, succeededSetupOf, type SetupOutcome } from './setups.ts';
import * as store from './store.ts';
import type { SessionRow } from './store.ts';
import * as views from './views.ts';
import { ownerOf } from '../lib/owner.ts';

/** The path the hosted pages are mounted at: the path part of CHECKOUT_URL ('' for the root). */
export const checkoutMountPath = (checkoutUrl: string): string => new URL(checkoutUrl).pathname.replace(/\/+$/, '');

const successRedirect = (s: SessionRow) => s.success_url.replaceAll('{CHECKOUT_SESSION_ID}', s.id);

/**
 * The hosted checkout pages: server-rendered HTML, no script, forms posted urlencoded with a CSRF
 * token. The unguessable session id in the URL is what admits the payer. Card fields are parsed
 * here, handed to the payment flow and never logged or stored.
 */
export function checkoutPagesRouter(s: Services): Router {
  const r = Router();
  const paths: views.PagePaths = { base: checkoutMountPath(s.config.checkoutUrl) };
  const csrf = createCsrf(s.sql);
  const limits = hostedPageLimits(s);
  const security = hostedPageSecurity();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const here = (row: SessionRow) => `${paths.base}/${row.id}`;

  /** The session of the URL, already expired when read past its expires_at; null for a non-id (not ours). */
  async function load(req: Request, res: Response): Promise<SessionRow | null | undefined> {
    const id = String(req.params.id);
    if (!isId('cs', id)) return null;
    const row = await store.findSessionForPage(s.sql, id);
    if (!row) {
      sendHtml(res, 404, messagePage('Checkout not found', 'This checkout link is not valid. Check the link or ask the merchant for a new one.'));
      return undefined;
    }
    return expireOnRead(s, row, req.log);
  }
  const page = pageRoutes(load);

  const prefillEmail = async (row: SessionRow): Promise<string> => (await pageEmail(s.sql, row)) ?? '';

  /** The account's name, logo and colour for the session's page, allowed in the response's CSP. */
  async function branding(res: Response, row: SessionRow): Promise<PageBrand> {
    const brand = await getBranding(s.sql, row.account_id);
    allowBrand(res, brand);
    return brand;
  }

  const processorOf = (row: SessionRow) => processorFor(s, row.livemode);
  const element = elementPages({ s, paths, csrf, limits, security, form, page, processorOf, here, successRedirect, prefillEmail });

  /** The payment page: the card form (simulator), the Payment Element (Stripe), or live payments off. */
  async function showForm(req: Request, res: Response, row: SessionRow, status: number, state: Partial<views.FormState> = {}) {
    const processor = processorOf(row);
    if (!processor) return refuseLivePayment(s, req, res, row);
    if (processor.collectsCard === 'element') return element.show(req, res, row, processor, status, { email: state.email, message: state.message });
    allowFormTargets(res, [row.success_url]);
    const token = await csrf.token(req, res, row.id);
    const email = state.email ?? (await prefillEmail(row));
    // The name a payer typed on a payment link's page (its payer_name) is the name on the card, until changed.
    const name = state.name ?? row.metadata.payer_name;
    sendHtml(res, status, views.checkoutPage(row, paths, { ...state, csrf: token, email, name }, await branding(res, row)));
  }

  /** A setup session's card form (the simulator's form: setup sessions are not made for the Payment Element). */
  async function showSetupForm(req: Request, res: Response, row: SessionRow, status: number, state: Partial<views.FormState> = {}) {
    const processor = processorOf(row);
    if (!processor) return refuseLivePayment(s, req, res, row);
    if (processor.collectsCard !== 'server') return sendHtml(res, offStatus(req), messagePage('Unavailable', 'Saving a card here is not available yet. Please contact the merchant.'));
    allowFormTargets(res, [row.success_url]);
    const token = await csrf.token(req, res, row.id);
    const email = state.email ?? (await prefillEmail(row));
    sendHtml(res, status, views.setupPage(row, paths, { ...state, csrf: token, email, name: state.name }, await branding(res, row)));
  }

  async function showSetupSession(req: Request, res: Response, row: SessionRow) {
    if (row.status === 'OPEN') return showSetupForm(req, res, row, 200);
    if (row.status === 'EXPIRED') return sendHtml(res, 200, views.setupExpiredPage(row, await branding(res, row)));
    sendHtml(res, 200, views.setupCompletedPage(row, await succeededSetupOf(s.sql, row.id), successRedirect(row), await branding(res, row)));
  }

  /** What the payer sees after a setup attempt or its challenge. */
  async function answerSetup(req: Request, res: Response, result: SetupOutcome, entered: { email: string; name: string }) {
    switch (result.kind) {
      case 'succeeded':
        return res.redirect(303, here(result.session));
      case 'requires_action':
        return res.redirect(303, `${here(result.session)}/authenticate?setup=${result.setup.id}`);
      case 'declined':
        return showSetupForm(req, res, result.session, 402, { ...entered, message: result.setup.failure_message });
      case 'in_progress':
        return sendHtml(res, 409, messagePage('Saving your card', 'Your card is being saved. Reload this page in a minute to see the outcome.'));
      default:
        return res.redirect(303, here(result.session));
    }
  }

  async function showSession(req: Request, res: Response, row: SessionRow) {
    if (row.mode === 'setup') return showSetupSession(req, res, row);
    if (row.status === 'OPEN' && (await inFlightOfSession(s.sql, ownerOf(row), row.id))?.review_status) {
      return sendHtml(res, 200, messagePage('Payment under review', views.IN_REVIEW));
    }
    if (row.status === 'OPEN') return showForm(req, res, row, 200);
    if (row.status === 'EXPIRED') return sendHtml(res, 200, views.expiredPage(row, await branding(res, row)));
    const payment = row.payment_id ? await findPayment(s.sql, ownerOf(row), row.payment_id) : undefined;
    sendHtml(res, 200, views.completedPage(row, payment, paths, successRedirect(row), await branding(res, row)));
  }

  /** What the payer sees after an attempt or a challenge. */
  async function answer(req: Request, res: Response, result: PayResult, entered: { email: string; name: string }) {
    switch (result.kind) {
      case 'succeeded':
        return res.redirect(303, successRedirect(result.session));
      case 'requires_action':
        return res.redirect(303, `${here(result.session)}/authenticate?payment=${result.payment.id}`);
      case 'declined':
        return showForm(req, res, result.session, 402, { ...entered, message: result.payment.failure_message });
      case 'refused':
        return showForm(req, res, result.session, 409, { ...entered, message: result.message });
      case 'in_progress':
        return sendHtml(res, 409, messagePage('Payment in progress', views.IN_PROGRESS));
      case 'in_review':
        return sendHtml(res, 202, messagePage('Payment under review', views.IN_REVIEW));
      default:
        return res.redirect(303, here(result.session));
    }
  }

  element.register(r);
  r.get('/:id', security, page((req, res, row) => showSession(req, res, row)));

  // The address bar after a declined card shows …/pay: reloading it (a GET) shows the session's page.
  r.get('/:id/pay', security, page(async (_req, res, row) => res.redirect(303, here(row))));

  r.post('/:id/pay', security, form, page(async (req, res, row) => {
    if (row.status !== 'OPEN') return res.redirect(303, here(row));
    // The card form posts only to a processor that takes the card from the service (the simulator).
    const processor = processorOf(row);
    if (!processor) return refuseLivePayment(s, req, res, row);
    if (processor.collectsCard !== 'server') return res.redirect(303, here(row));
    const body = (req.body ?? {}) as Record<string, unknown>;
    const entered = { email: str(body.email), name: str(body.name) };
    const setup = row.mode === 'setup';
    const again = setup ? showSetupForm : showForm;
    if (!(await csrf.verify(req, row.id))) {
      return again(req, res, row, 403, { ...entered, message: 'This form has expired. Please enter your card details again.' });
    }
    const throttled = await limits.payAttempt(clientAddress(req), row.id);
    if (throttled) {
      req.log.warn({ session: row.id, retryAfter: throttled.retryAfterSeconds }, 'payment attempt throttled');
      return again(req, res, row, 429, { ...entered, message: `Too many payment attempts. ${throttledAnswer(res, throttled)}` });
    }
    const fields: CardForm = { ...entered, card_number: str(body.card_number), expiry: str(body.expiry), cvc: str(body.cvc) };
    const parsed = parseCardForm(fields);
    const unreadable = unreadableFields(entered, { email: 'The email', name: 'The name' });
    if (unreadable || 'errors' in parsed) {
      return again(req, res, row, 400, { ...entered, errors: { ...('errors' in parsed ? parsed.errors : {}), ...unreadable } });
    }
    // A setup session saves the card (a plan's card update): the same checks, no charge.
    if (setup) return answerSetup(req, res, await setupWithCard(s, row, parsed.card, parsed.email, req.log), entered);
    await answer(req, res, await payWithCard(s, row, parsed.card, parsed.email, req.log, { ip: clientAddress(req) }), entered);
  }, ['email', 'name']));

  r.get('/:id/authenticate', security, page(async (req, res, row) => {
    if (row.mode === 'setup') {
      const id = str(req.query.setup);
      const waiting = row.status === 'OPEN' && isId('seti', id) ? await findSetup(s.sql, row.id, id) : undefined;
      if (!waiting || waiting.status !== 'PENDING' || waiting.next_action !== 'three_d_secure') return res.redirect(303, here(row));
      allowFormTargets(res, [row.success_url]);
      return sendHtml(res, 200, views.setupChallengePage(row, waiting, paths, await csrf.token(req, res, row.id), await branding(res, row)));
    }
    const payment = row.status === 'OPEN' ? await pendingChallenge(s, row, str(req.query.payment)) : undefined;
    if (!payment) return res.redirect(303, here(row));
    allowFormTargets(res, [row.success_url]);
    sendHtml(res, 200, views.challengePage(row, payment, paths, await csrf.token(req, res, row.id), await branding(res, row)));
  }));

  r.post('/:id/authenticate', security, form, page(async (req, res, row) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const outcome = str(body.outcome);
    if (row.mode === 'setup') {
      const id = str(body.setup);
      if (row.status !== 'OPEN' || !isId('seti', id) || (outcome !== 'complete' && outcome !== 'fail')) return res.redirect(303, here(row));
      if (!(await csrf.verify(req, row.id))) {
        return sendHtml(res, 403, messagePage('Please try again', 'This form has expired. Go back to the page and save your card again.'));
      }
      const result = await finishSetupChallenge(s, row, id, outcome, req.log);
      const setup = result.kind === 'declined' ? result.setup : undefined;
      return answerSetup(req, res, result, { email: setup?.email ?? '', name: setup?.billing_name ?? '' });
    }
    if (row.status !== 'OPEN' || !isId('pay', str(body.payment)) || (outcome !== 'complete' && outcome !== 'fail')) {
      return res.redirect(303, here(row));
    }
    if (!(await csrf.verify(req, row.id))) {
      return sendHtml(res, 403, messagePage('Please try again', 'This form has expired. Go back to the checkout page and pay again.'));
    }
    const result = await finishChallenge(s, row, str(body.payment), outcome, req.log);
    const payment = result.kind === 'declined' ? await findPayment(s.sql, ownerOf(row), str(body.payment)) : undefined;
    await answer(req, res, result, { email: payment?.email ?? '', name: payment?.billing_name ?? '' });
  }));

  r.get('/:id/receipt', security, page(async (req, res, row) => {
    const payment = row.status === 'COMPLETE' && row.payment_id ? await findPayment(s.sql, ownerOf(row), row.payment_id) : undefined;
    if (!payment) return res.redirect(303, here(row));
    sendHtml(res, 200, views.receiptPage(row, payment, await refundsOfPayment(s.sql, ownerOf(row), payment.id), await branding(res, row)));
  }));

  r.use(hostedPageErrors);
  return r;
}
