import express, { Router, type Request, type Response } from 'express';
import { getBranding, getBusinessName } from '../auth/keys.ts';
import { sessionUrl } from '../checkout/presenter.ts';
import { createSession } from '../checkout/service.ts';
import { findReusableInvoiceSession, findSession } from '../checkout/store.ts';
import { findCustomer } from '../customers/store.ts';
import { isId } from '../lib/ids.ts';
import { ownerOf } from '../lib/owner.ts';
import {
  allowBrand,
  allowFormTargets,
  clientAddress,
  createCsrf,
  formText,
  hostedPageErrors,
  hostedPageLimits,
  hostedPageSecurity,
  messagePage,
  pageRoutes,
  sendHtml,
  throttledAnswer,
  unreadableFields,
} from '../pages/index.ts';
import { chargesEnabled } from '../processor/select.ts';
import type { Services } from '../services.ts';
import { INVOICE_IN_PLAN, INVOICE_PAID, INVOICE_VOID, isPayable } from './participant.ts';
import { newPlanChoice, planOffers, readPlanForm, testCalendar } from '../installments/offer.ts';
import { activePlanOfInvoice, partsOf } from '../installments/store.ts';
import type { PlanChoiceState } from '../installments/views.ts';
import { invoicePdf, pdfFileName } from './pdf.ts';
import { findInvoiceByToken, type InvoiceRow } from './store.ts';
import { invoicePage, invoiceTitle, notFoundPage, parsePayAmount, refusedPage, type InvoicePageView, type PaidNotice, type PayForm } from './views.ts';

/** Where the hosted invoice pages are mounted: the path of INVOICE_URL. */
export const invoiceMountPath = (invoiceUrl: string): string => new URL(invoiceUrl).pathname.replace(/\/+$/, '');

/** What can be an invoice's hosted token in a URL (anything else is not ours, or a 404). */
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/;
/** A session handed out again must leave the payer this long to pay (else a new one is opened). */
const REUSE_MIN_LEFT_SECONDS = 30 * 60;
const LIVE_OFF = 'This merchant cannot take live payments yet. Nothing was charged. Please contact the merchant or try again later.';

/**
 * The hosted invoice page at INVOICE_URL/<token> (the unguessable hosted_token, live once the
 * invoice is sent): server-rendered HTML, no script, the shared layout and CSP. Its Pay form
 * (CSRF-checked, rate-limited like a link's form) opens a checkout session for the invoice, or
 * hands out an open one of the same amount again, and sends the payer to the hosted checkout;
 * the invoice's payment participant (participant.ts) holds the amount due exactly. The session's
 * success_url brings the payer back here with `?paid=<session id>`. `/pdf` is the invoice as a PDF.
 */
export function invoicePagesRouter(s: Services): Router {
  const r = Router();
  const base = invoiceMountPath(s.config.invoiceUrl);
  const csrf = createCsrf(s.sql);
  const limits = hostedPageLimits(s);
  const security = hostedPageSecurity();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const pathOf = (inv: InvoiceRow) => `${base}/${inv.hosted_token}`;

  /** The sent invoice of the URL; null when the segment cannot be a token (left to the routes after this one). */
  async function load(req: Request, res: Response): Promise<InvoiceRow | null | undefined> {
    const token = String(req.params.token);
    if (!TOKEN.test(token)) {
      if (base === '') return null;
      sendHtml(res, 404, notFoundPage());
      return undefined;
    }
    const inv = await findInvoiceByToken(s.sql, token);
    if (inv) return inv;
    if (base === '') return null;
    sendHtml(res, 404, notFoundPage());
    return undefined;
  }
  const page = pageRoutes(load);

  /** The page's view without a form, in the account's branding (allowed in the response's CSP). */
  async function brandedView(res: Response, inv: InvoiceRow): Promise<InvoicePageView> {
    const brand = await getBranding(s.sql, inv.account_id);
    allowBrand(res, brand);
    return { inv, merchant: brand.business_name, brand, path: pathOf(inv), csrf: null };
  }

  /** The installment plans offered over what is due now (allow_installments), their dates from now. */
  function offersOf(inv: InvoiceRow, merchant: string | null) {
    if (!inv.allow_installments) return null;
    const calendar = testCalendar(s, inv.livemode);
    const offers = planOffers({ total: inv.amount_due_cents, currency: inv.currency, options: inv.installment_options, merchant, testIntervalSeconds: calendar.interval });
    return { offers, shortened: calendar.interval !== null };
  }

  /** The page, with the pay form when something can be paid now; a plan under way shows its progress instead. */
  async function show(
    req: Request,
    res: Response,
    inv: InvoiceRow,
    status: number,
    extra: { form?: PayForm; paid?: PaidNotice | null; plan?: PlanChoiceState } = {},
  ) {
    const { plan: planState, ...rest } = extra;
    const view: InvoicePageView = { ...(await brandedView(res, inv)), ...rest };
    const active = await activePlanOfInvoice(s.sql, inv.id);
    if (active) view.activePlan = { plan: active, parts: await partsOf(s.sql, active.id) };
    if (isPayable(inv) && inv.amount_due_cents > 0 && !active) {
      if (!chargesEnabled(s, inv.livemode)) view.unavailable = LIVE_OFF;
      else {
        allowFormTargets(res, [s.config.checkoutUrl]);
        view.csrf = await csrf.token(req, res, inv.id);
        const offered = offersOf(inv, view.merchant);
        if (offered) view.plans = { ...offered, state: planState ?? {} };
      }
    }
    sendHtml(res, status, invoicePage(view));
  }

  /** The session of `?paid=`: the payment it brought back, when it is one of this invoice's. */
  async function paidNotice(inv: InvoiceRow, id: string): Promise<PaidNotice | null> {
    if (!isId('cs', id)) return null;
    const session = await findSession(s.sql, ownerOf(inv), id);
    if (!session || session.invoice_id !== inv.id) return null;
    if (session.status !== 'COMPLETE') return { amountCents: null, receiptUrl: null };
    return { amountCents: session.amount_cents, receiptUrl: `${sessionUrl(s.config.checkoutUrl, session.id)}/receipt` };
  }

  r.get('/:token', security, page(async (req, res, inv) => {
    const paid = typeof req.query.paid === 'string' ? await paidNotice(inv, req.query.paid) : null;
    await show(req, res, inv, 200, { paid });
  }));

  r.post('/:token/pay', security, form, page(async (req, res, inv) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const typed = formText(body.amount);
    const view = () => brandedView(res, inv);
    if (inv.status === 'PAID' || inv.status === 'VOID' || !isPayable(inv) || inv.amount_due_cents <= 0) {
      const message = inv.status === 'VOID' ? INVOICE_VOID : inv.status === 'PAID' || inv.amount_due_cents <= 0 ? INVOICE_PAID : 'This invoice cannot be paid.';
      return sendHtml(res, 409, refusedPage(await view(), message));
    }
    // The merchant's setup, not an outage (issue 21): 409, never a 5xx.
    if (!chargesEnabled(s, inv.livemode)) return sendHtml(res, 409, refusedPage(await view(), LIVE_OFF));
    const planForm = { plan: formText(body.plan).trim(), agree: formText(body.agree) === 'yes' };
    if (!(await csrf.verify(req, inv.id))) {
      return show(req, res, inv, 403, { form: { amount: typed, message: 'This form has expired. Please submit it again.' }, plan: planForm });
    }
    if (await activePlanOfInvoice(s.sql, inv.id)) return sendHtml(res, 409, refusedPage(await view(), INVOICE_IN_PLAN));
    // Card testing: each post may open a session (a row and a job), so a throttled one stops here.
    const throttled = await limits.openSession(clientAddress(req), inv.id);
    if (throttled) {
      req.log.warn({ invoice: inv.id, retryAfter: throttled.retryAfterSeconds }, 'invoice checkout throttled');
      return sendHtml(res, 429, messagePage('Too many attempts', `Too many checkouts were started from your network. ${throttledAnswer(res, throttled)}`));
    }
    // A plan chosen: its first part, for a plan of what is due, agreed; the invoice's customer is the payer.
    const offered = offersOf(inv, await getBusinessName(s.sql, inv.account_id));
    const choice = offered ? readPlanForm(planForm, offered.offers) : ({ full: true } as const);
    if ('errors' in choice) return show(req, res, inv, 400, { form: { amount: typed }, plan: { ...planForm, errors: choice.errors } });
    if ('offer' in choice) {
      const o = ownerOf(inv);
      const email = await findCustomer(s.sql, o, inv.customer_id).then((c) => c?.email ?? null);
      if (!email) return sendHtml(res, 409, refusedPage(await view(), 'This invoice cannot be paid in installments: its customer no longer exists. Please contact the merchant.'));
      const plan = newPlanChoice(s, { offer: choice.offer, total: inv.amount_due_cents, email, ip: clientAddress(req), livemode: inv.livemode });
      const session = await createSession(
        s,
        o,
        {
          amount: choice.offer.parts[0]!.amountCents,
          currency: inv.currency,
          success_url: `${s.config.invoiceUrl}/${inv.hosted_token}?paid={CHECKOUT_SESSION_ID}`,
          cancel_url: `${s.config.invoiceUrl}/${inv.hosted_token}`,
          customer_id: inv.customer_id,
          description: invoiceTitle(inv),
          metadata: { invoice_id: inv.id, ...(inv.number ? { invoice_number: inv.number } : {}) },
        },
        { invoiceId: inv.id, installment: plan },
      );
      return res.redirect(303, sessionUrl(s.config.checkoutUrl, session.id));
    }
    let amount = inv.amount_due_cents;
    if (inv.allow_partial_payments) {
      const unreadable = unreadableFields({ amount: typed }, { amount: 'The amount to pay' });
      const parsed = unreadable ? { error: unreadable.amount! } : parsePayAmount(typed, inv);
      if ('error' in parsed) return show(req, res, inv, 400, { form: { amount: typed, error: parsed.error } });
      amount = parsed.amount;
    }
    const o = ownerOf(inv);
    const session =
      (await findReusableInvoiceSession(s.sql, o, inv.id, amount, REUSE_MIN_LEFT_SECONDS)) ??
      (await createSession(
        s,
        o,
        {
          amount,
          currency: inv.currency,
          success_url: `${s.config.invoiceUrl}/${inv.hosted_token}?paid={CHECKOUT_SESSION_ID}`,
          cancel_url: `${s.config.invoiceUrl}/${inv.hosted_token}`,
          customer_id: inv.customer_id,
          description: invoiceTitle(inv),
          metadata: { invoice_id: inv.id, ...(inv.number ? { invoice_number: inv.number } : {}) },
        },
        { invoiceId: inv.id },
      ));
    res.redirect(303, sessionUrl(s.config.checkoutUrl, session.id));
  }, ['amount']));

  r.get('/:token/pdf', security, page(async (_req, res, inv) => {
    const customer = await findCustomer(s.sql, ownerOf(inv), inv.customer_id);
    const name = customer ? `${customer.first_name} ${customer.last_name}`.trim() : '';
    const pdf = await invoicePdf({
      inv,
      merchant: await getBusinessName(s.sql, inv.account_id),
      billTo: customer ? { name: name || null, company: customer.company_name, email: customer.email } : null,
      url: `${s.config.invoiceUrl}/${inv.hosted_token}`,
    });
    res
      .status(200)
      .type('application/pdf')
      .setHeader('Content-Disposition', `attachment; filename="${pdfFileName(inv)}"`)
      .send(pdf);
  }));

  r.use(hostedPageErrors);
  return r;
}
