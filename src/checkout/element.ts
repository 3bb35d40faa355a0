import type { Request, RequestHandler, Response, Router } from 'express';
import type { Logger } from 'pino';
import { getBranding } from '../auth/keys.ts';
import { ownerOf } from '../lib/owner.ts';
import * as payments from '../payments/store.ts';
import {
  allowBrand,
  allowPaymentElement,
  clientAddress,
  formText as str,
  messagePage,
  sendHtml,
  staticScript,
  throttledAnswer,
  type Csrf,
  type HostedPageLimits,
  type PageBrand,
} from '../pages/index.ts';
import { emailProblem } from '../processor/cards.ts';
import type { AttemptLookup, Processor } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { elementIntent, payWithToken, startElementAttempt, type ElementResult, type PayResult } from './pay.ts';
import { isPlanChoice } from '../lib/installments.ts';
import { recordOutcome } from './settle.ts';
import { findSession, type SessionRow } from './store.ts';
import * as views from './views.ts';

/**
 * The hosted checkout of a session whose processor collects the card in the browser (Stripe's
 * Payment Element, docs/decisions.md "Payment Element page"): the page, our script, the prepare
 * post (transaction 1 before the browser confirms with Stripe) and the return from Stripe.
 * The card never reaches these routes: the browser sends it to Stripe.
 */

/** Our script for the page, served from the pages' own origin (script-src 'self'). */
const script = staticScript(new URL('./assets/element.js', import.meta.url));
export const ELEMENT_SCRIPT_PATH = '/assets/element.js';

const UNAVAILABLE = 'Payments are temporarily unavailable. Nothing was charged. Please try again in a few minutes.';
const NOT_AUTHENTICATED = 'Your bank could not confirm this payment. Nothing was charged. Please try again or use another card.';
const TOKEN_EXPIRED = 'This payment form has expired. Nothing was charged. Please try again.';
/** Stripe's confirmation token ids (ctoken_…): anything else is refused before Stripe is asked. */
const TOKEN_SHAPE = /^ctoken_[A-Za-z0-9_]{1,200}$/;

/** What the routes of pages.ts share with these. */
export interface ElementContext {
  s: Services;
  paths: views.PagePaths;
  csrf: Csrf;
  limits: HostedPageLimits;
  security: RequestHandler;
  form: RequestHandler;
  page: (handle: (req: Request, res: Response, row: SessionRow) => Promise<unknown>, shown?: readonly string[]) => RequestHandler;
  processorOf(row: SessionRow): Processor | null;
  here(row: SessionRow): string;
  successRedirect(row: SessionRow): string;
  prefillEmail(row: SessionRow): Promise<string>;
}


/** The account's name, logo and colour for a page of the session, allowed in the response's CSP. */
async function branding(s: Services, res: Response, row: SessionRow): Promise<PageBrand> {
  const brand = await getBranding(s.sql, row.account_id);
  allowBrand(res, brand);
  return brand;
}

/**
 * A live session while live payments are off: a page with no form, in the merchant's branding. It
 * is the merchant's setup, not an outage (issue 21): reading the page answers 200 and a post 409,
 * never a 5xx that would page whoever watches the service.
 */
export async function refuseLivePayment(s: Services, req: Request, res: Response, row: SessionRow): Promise<void> {
  sendHtml(res, offStatus(req), views.livePaymentsOffPage(row, await branding(s, res, row)));
}

/** The status of a page that cannot be used because of the merchant's setup (live payments off): 200 to read it, 409 to a post. */
export const offStatus = (req: Request): number => (req.method === 'POST' ? 409 : 200);
export const LIVE_OFF_MESSAGE = 'This merchant cannot take live payments yet. Nothing was charged.';

export function elementPages(c: ElementContext) {
  const { s } = c;
  /** Where Stripe sends the payer back after a redirect (3-D Secure), and where the page goes once the browser's part is done. */
  const returnUrlOf = (row: SessionRow) => `${s.config.checkoutUrl}/${row.id}/element/return`;

  /** The Payment Element page of an OPEN session (the intent is created or reused first). */
  async function show(req: Request, res: Response, row: SessionRow, processor: Processor, status: number, state: { email?: string; message?: string | null } = {}) {
    let intent: Awaited<ReturnType<typeof elementIntent>>;
    try {
      intent = await elementIntent(s, row);
    } catch (err) {
      req.log.error({ err, session: row.id }, 'payment intent for the hosted page failed');
      res.setHeader('Retry-After', '30');
      return sendHtml(res, 503, messagePage('Temporarily unavailable', UNAVAILABLE));
    }
    allowPaymentElement(res, s.config.stripe);
    const brand = await branding(s, res, row);
    const base = `${c.paths.base}/${row.id}`;
    sendHtml(res, status, views.elementPage(intent.session, c.paths, {
      csrf: await c.csrf.token(req, res, row.id),
      email: state.email ?? (await c.prefillEmail(row)),
      message: state.message,
      publishableKey: processor.publishableKey ?? '',
      clientSecret: intent.clientSecret,
      amount: row.amount_cents,
      currency: row.currency,
      saveCard: isPlanChoice(row.installment),
      stripeJsUrl: s.config.stripe.jsUrl,
      scriptUrl: `${c.paths.base}${ELEMENT_SCRIPT_PATH}?${script.version}`,
      prepareUrl: `${base}/element/prepare`,
      returnUrl: returnUrlOf(row),
    }, brand));
  }

  /**
   * The prepare post's JSON answer: ok (a page without a token confirms now), the client secret
   * for the browser's 3-D Secure (next_action), an error to show, or a page to go to.
   */
  function prepared(res: Response, result: ElementResult | { kind: 'started' }, row: SessionRow) {
    switch (result.kind) {
      case 'started':
        return res.status(200).json({ ok: true });
      case 'next_action':
        return res.status(200).json({ next_action: true, client_secret: result.clientSecret });
      case 'in_review': // authorised and held: the session's page says so
        return res.status(200).json({ redirect: c.here(result.session) });
      case 'invalid_token':
        return res.status(400).json({ error: TOKEN_EXPIRED });
      case 'unavailable':
        res.setHeader('Retry-After', '30');
        return res.status(503).json({ error: UNAVAILABLE });
      case 'succeeded':
        return res.status(200).json({ redirect: c.successRedirect(result.session) });
      case 'refused':
        return res.status(409).json({ error: result.message });
      case 'declined': // blocked by a fraud rule before the browser confirms (docs/fraud.md)
        return res.status(402).json({ error: result.payment.failure_message });
      case 'in_progress':
        return res.status(409).json({ error: views.IN_PROGRESS });
      default:
        return res.status(409).json({ redirect: c.here(row) });
    }
  }

  function register(r: Router): void {
    r.get(ELEMENT_SCRIPT_PATH, script.handler);

    r.post('/:id/element/prepare', c.security, c.form, c.page(async (req, res, row) => {
      if (row.status !== 'OPEN') return res.status(409).json({ redirect: c.here(row) });
      const processor = c.processorOf(row);
      if (!processor) return res.status(409).json({ error: LIVE_OFF_MESSAGE });
      if (processor.collectsCard !== 'element' || !row.payment_intent_id) return res.status(409).json({ redirect: c.here(row) });
      if (!(await c.csrf.verify(req, row.id))) return res.status(403).json({ error: 'This page has expired. Reload it and try again.' });
      // Counted like the card form's posts, before any check, so that every press counts.
      const payer = { ip: clientAddress(req) };
      const throttled = await c.limits.payAttempt(payer.ip, row.id);
      if (throttled) {
        req.log.warn({ session: row.id, retryAfter: throttled.retryAfterSeconds }, 'payment attempt throttled');
        return res.status(429).json({ error: `Too many payment attempts. ${throttledAnswer(res, throttled)}` });
      }
      const body = (req.body ?? {}) as Record<string, unknown>;
      const email = str(body.email).trim();
      const badEmail = emailProblem(email);
      if (badEmail) return res.status(400).json({ field: 'email', error: badEmail });
      // The page's confirmation token (Stripe.js createConfirmationToken): the server reads the card
      // from it, runs the rules and confirms (payWithToken). Without one, a page opened before
      // server-side confirmation: the attempt is recorded and the browser confirms.
      const token = str(body.confirmation_token).trim();
      if (!token) return prepared(res, await startElementAttempt(s, processor, row, email, req.log, payer), row);
      if (!TOKEN_SHAPE.test(token)) return res.status(400).json({ error: TOKEN_EXPIRED });
      prepared(res, await payWithToken(s, processor, row, { email, token, returnUrl: returnUrlOf(row) }, req.log, payer), row);
    }, ['email']));

    r.get('/:id/element/return', c.security, c.page(async (req, res, row) => {
      const intent = str(req.query.payment_intent);
      if (row.status === 'COMPLETE') return res.redirect(303, c.successRedirect(row));
      const processor = c.processorOf(row);
      if (row.status !== 'OPEN' || !processor || processor.collectsCard !== 'element' || !intent || intent !== row.payment_intent_id) {
        return res.redirect(303, c.here(row));
      }
      const result = await settleReturn(s, processor, row, req.log);
      switch (result.kind) {
        case 'succeeded':
          return res.redirect(303, c.successRedirect(result.session));
        case 'declined':
          return show(req, res, result.session, processor, 402, { email: result.payment.email ?? undefined, message: result.payment.failure_message });
        case 'requires_action':
          return show(req, res, result.session, processor, 402, { email: result.payment.email ?? undefined, message: NOT_AUTHENTICATED });
        case 'in_progress':
          return sendHtml(res, 200, messagePage('Payment in progress', views.IN_PROGRESS));
        default:
          return res.redirect(303, result.session.status === 'COMPLETE' ? c.successRedirect(result.session) : c.here(result.session));
      }
    }));
  }

  return { show, register };
}

/**
 * The payer is back from Stripe: the attempt of the session in flight on its intent is settled
 * with what Stripe says of the intent (never with the query's redirect_status, which anyone can
 * type). Exactly once with the processor's webhook: recordOutcome changes only an attempt still
 * in flight, under the session lock. Stripe still processing: the attempt stays in flight.
 */
async function settleReturn(s: Services, processor: Processor, row: SessionRow, log: Logger): Promise<PayResult> {
  const attempt = await payments.inFlightOfSession(s.sql, ownerOf(row), row.id);
  const intentId = row.payment_intent_id;
  // Nothing in flight: the webhook may have settled it since the page read the row, so the payer
  // lands where the session is now (success_url once COMPLETE), never on a stale copy.
  if (!attempt || !intentId || attempt.payment_intent_id !== intentId) return { kind: 'ended', session: (await findSession(s.sql, ownerOf(row), row.id)) ?? row };
  let lookup: AttemptLookup;
  try {
    lookup = await processor.retrieveAttempt(intentId, attempt.id);
  } catch (err) {
    log.error({ err, paymentId: attempt.id }, 'processor unavailable on the return from the payment page; the webhook or the sweeper settles it');
    return { kind: 'in_progress', session: row };
  }
  if (lookup.status === 'processing') return { kind: 'in_progress', session: row };
  return recordOutcome(s, attempt, lookup, log);
}
