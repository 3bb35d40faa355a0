import express, { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { sessionUrl } from '../checkout/presenter.ts';
import { findSession } from '../checkout/store.ts';
import { getBranding } from '../auth/keys.ts';
import { isId } from '../lib/ids.ts';
import {
  allowBrand,
  clientAddress,
  createCsrf,
  formText,
  hostedPageErrors,
  hostedPageLimits,
  hostedPageSecurity,
  messagePage,
  pageRoutes,
  throttledAnswer,
  unreadableFields,
} from '../pages/index.ts';
import { sendHtml, sendSlotted, SlottedPages, type PageBrand } from '../pages/index.ts';
import type { Services } from '../services.ts';
import { chargesEnabled } from '../processor/select.ts';
import { ViewRecorder } from './view-counter.ts';
import { endedPage, linkPage, notFoundPage, paymentsOffPage, SHOWN_FIELDS, thanksPage, type LinkOffers, type PayerForm } from './views.ts';
import { newPlanChoice, planOffers, readPlanForm, testCalendar, validPlanEmail } from '../installments/offer.ts';
import { parseSource, SLUG_PATTERN, type LinkSource } from './schema.ts';
import { closedReason, startCheckout, type Payer } from './service.ts';
import * as store from './store.ts';
import type { PaymentLinkRow } from './store.ts';
import { ownerOf } from '../lib/owner.ts';

/** The path the public link pages are mounted at: the path part of PUBLIC_LINK_URL ('' for the root). */
export const paymentLinkMountPath = (publicLinkUrl: string): string => new URL(publicLinkUrl).pathname.replace(/\/+$/, '');

/** Link pages kept as bytes (SlottedPages): a page is about 7 KB, so at most about 7 MB. */
const FIRST_FORMS_KEPT = 1_000;

const PHONE = /^\+?[0-9 ().-]{6,32}$/;
const isEmail = (v: string) => z.email().safeParse(v).success;
/** What the payer typed, without the spaces around it. */
const typed = (v: unknown) => formText(v).trim();

/** The payer fields the link's form shows: their problems are named beside the inputs. */
const collectedFields = (link: PaymentLinkRow) =>
  (['name', 'email', 'phone'] as const).filter((f) => link[`collect_${f}`]);

/** The problems with what the payer typed, for the fields the link collects; null when none. */
function payerErrors(link: PaymentLinkRow, p: Payer): PayerForm['errors'] | null {
  const errors: NonNullable<PayerForm['errors']> = {};
  // Only collected fields can get here unreadable: the others were refused with a page naming them.
  const unreadable = unreadableFields(p, { name: 'Your name', email: 'Your email', phone: 'Your phone number' });
  if (unreadable) return unreadable;
  if (link.collect_name && (!p.name || p.name.length > 200)) errors.name = 'Enter your name.';
  if (link.collect_email && (p.email.length > 254 || !isEmail(p.email))) errors.email = 'Enter a valid email address, like you@example.com.';
  if (link.collect_phone && (!PHONE.test(p.phone) || p.phone.replace(/\D/g, '').length < 6)) {
    errors.phone = 'Enter a valid phone number, like +1 415 555 0100.';
  }
  return Object.keys(errors).length ? errors : null;
}

/**
 * The public page of a payment link at PUBLIC_LINK_URL/<slug or id>: server-rendered HTML, no
 * script, one urlencoded form with a CSRF token. Its post opens a checkout session tied to the
 * link and sends the payer to the hosted checkout. A page load is counted by appending to the
 * view buffer only: it never waits on Redis or Postgres for counting.
 */
export function paymentLinkPagesRouter(s: Services): Router {
  const views = new ViewRecorder(s.queues, s.log.child({ component: 'link-views' }));
  s.beforeClose.push(() => views.close());

  const r = Router();
  const base = paymentLinkMountPath(s.config.publicLinkUrl);
  const csrf = createCsrf(s.sql);
  const limits = hostedPageLimits(s);
  // The form posts to the hosted checkout: its origin in form-action on every page of the router.
  const security = hostedPageSecurity(undefined, [s.config.checkoutUrl]);
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const firstForms = new SlottedPages(FIRST_FORMS_KEPT);
  const formsSent = { kept: s.metrics.linkForms.labels('kept'), new: s.metrics.linkForms.labels('new'), rendered: s.metrics.linkForms.labels('rendered') };
  for (const series of Object.values(formsSent)) series.inc(0); // each outcome exported from the start, at 0

  /** The link of the URL; null when the segment cannot be a link (left to the routes after this one). */
  async function load(req: Request, res: Response): Promise<PaymentLinkRow | null | undefined> {
    const key = String(req.params.key);
    if (!isId('pl', key) && !SLUG_PATTERN.test(key)) return null;
    const link = await store.findPublicLink(s.sql, key);
    if (link) return link;
    if (base === '') return null;
    sendHtml(res, 404, notFoundPage());
    return undefined;
  }
  const page = pageRoutes(load);

  /** The account's name, logo and colour for the link's page, allowed in the response's CSP. */
  async function branding(res: Response, link: PaymentLinkRow): Promise<PageBrand> {
    const brand = await getBranding(s.sql, link.account_id);
    allowBrand(res, brand);
    return brand;
  }

  /** The installment plans the link offers now (none unless installment_enabled), with their dates from now. */
  function offersOf(link: PaymentLinkRow, brand: PageBrand): LinkOffers | null {
    if (!link.installment_enabled) return null;
    const calendar = testCalendar(s, link.livemode);
    const offers = planOffers({ total: link.amount_cents, currency: link.currency, options: link.installment_options, merchant: brand.business_name, testIntervalSeconds: calendar.interval });
    return { offers, shortened: calendar.interval !== null };
  }

  async function showForm(req: Request, res: Response, link: PaymentLinkRow, source: LinkSource, status: number, state?: PayerForm) {
    const token = await csrf.token(req, res, link.id);
    const brand = await branding(res, link);
    const action = `${base}/${encodeURIComponent(String(req.params.key))}`;
    const offers = offersOf(link, brand);
    // The form as first shown (nothing typed, no plan dated from now): its bytes made once, keyed by
    // what it shows (the link's shown fields, every field of the branding, the action, the source).
    if (state === undefined && offers === null) {
      const key = JSON.stringify([SHOWN_FIELDS.map((f) => link[f]), Object.values(brand), action, source]);
      let made = false;
      const page = firstForms.get(key, (slot) => ((made = true), linkPage(link, brand, action, slot, source)));
      if (page) {
        (made ? formsSent.new : formsSent.kept).inc();
        return sendSlotted(res, status, page, token);
      }
    }
    formsSent.rendered.inc();
    sendHtml(res, status, linkPage(link, brand, action, token, source, state, offers));
  }

  r.get('/:key', security, page(async (req, res, link) => {
    const source = parseSource(req.query.src);
    if (req.method === 'GET') views.record(link.id, source);
    const closed = closedReason(link, 0);
    if (closed) return sendHtml(res, 200, endedPage(link, await branding(res, link), closed.badge, closed.message));
    // A live link while live payments are off (no Stripe keys): no form, nothing to start. The
    // merchant's setup, not an outage: 200 here, 409 to a post, never a 5xx (issue 21).
    if (!chargesEnabled(s, link.livemode)) return sendHtml(res, 200, paymentsOffPage(link, await branding(res, link)));
    await showForm(req, res, link, source, 200);
  }));

  r.post('/:key', security, form, page(async (req, res, link) => {
    if (!chargesEnabled(s, link.livemode)) return sendHtml(res, 409, paymentsOffPage(link, await branding(res, link)));
    const body = (req.body ?? {}) as Record<string, unknown>;
    const source = parseSource(body.src);
    const payer: Payer = { name: typed(body.name), email: typed(body.email), phone: typed(body.phone) };
    const planForm = { plan: typed(body.plan), agree: typed(body.agree) === 'yes' };
    const chosen = { plan: planForm.plan, agree: planForm.agree };
    if (!(await csrf.verify(req, link.id))) {
      return showForm(req, res, link, source, 403, { ...payer, plan: chosen, message: 'This form has expired. Please submit it again.' });
    }
    // Card testing: each post opens a session (a row and a job), so a throttled one stops here.
    const throttled = await limits.openSession(clientAddress(req), link.id);
    if (throttled) {
      req.log.warn({ link: link.id, retryAfter: throttled.retryAfterSeconds }, 'link checkout throttled');
      return sendHtml(res, 429, messagePage('Too many attempts', `Too many checkouts were started from your network. ${throttledAnswer(res, throttled)}`));
    }
    const closed = closedReason(link, await store.succeededPayments(s.sql, link.id));
    if (closed) return sendHtml(res, 409, endedPage(link, await branding(res, link), closed.badge, closed.message));
    // A plan (when the link offers them): the agreement ticked, and an email to find the customer by.
    const offers = offersOf(link, await getBranding(s.sql, link.account_id));
    const choice = offers ? readPlanForm(planForm, offers.offers) : ({ full: true } as const);
    const errors = payerErrors(link, payer) ?? {};
    const planErrors = 'errors' in choice ? choice.errors : {};
    const wantsPlan = offers !== null && !('full' in choice);
    if (wantsPlan && !errors.email && !validPlanEmail(payer.email)) {
      errors.email = 'Enter your email, like you@example.com: a payment plan needs it for its notices.';
    }
    if (Object.keys(errors).length || Object.keys(planErrors).length) {
      return showForm(req, res, link, source, 400, { ...payer, errors, plan: { ...chosen, errors: planErrors } });
    }
    const plan = 'offer' in choice ? newPlanChoice(s, { offer: choice.offer, total: link.amount_cents, email: payer.email, ip: clientAddress(req), livemode: link.livemode }) : null;
    const session = await startCheckout(s, link, source, payer, plan);
    res.redirect(303, sessionUrl(s.config.checkoutUrl, session.id));
  }, (link) => [...collectedFields(link), ...(link.installment_enabled ? ['email'] : [])]));

  // The success_url of the link's checkout sessions.
  r.get('/:key/paid', security, page(async (req, res, link) => {
    const id = String(req.query.session ?? '');
    const session = isId('cs', id) ? await findSession(s.sql, ownerOf(link), id) : undefined;
    const paid = session && session.payment_link_id === link.id && session.status === 'COMPLETE';
    sendHtml(res, 200, thanksPage(link, await branding(res, link), paid ? `${sessionUrl(s.config.checkoutUrl, session.id)}/receipt` : null));
  }));

  r.use(hostedPageErrors);
  return r;
}
