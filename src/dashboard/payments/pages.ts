import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { findSession } from '../../checkout/store.ts';
import { existingCustomerIds } from '../../customers/store.ts';
import { UpdateDispute } from '../../disputes/schema.ts';
import { closeDispute, updateDispute } from '../../disputes/service.ts';
import { findDispute, listDisputes, type DisputeRow } from '../../disputes/store.ts';
import { ApiError, resourceMissing } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId, text, validate } from '../../lib/validate.ts';
import { formText } from '../../pages/index.ts';
import { presentPayment } from '../../payments/presenter.ts';
import { ListPayments } from '../../payments/schema.ts';
import { findPayment, listPayments, type PaymentRow } from '../../payments/store.ts';
import { CreateRefund } from '../../refunds/schema.ts';
import { getRefundLimits } from '../../team/store.ts';
import { can } from '../../team/roles.ts';
import { formatAmount } from '../../lib/currency.ts';
import type { Owner } from '../../lib/owner.ts';
import { cancelRefund, createRefund } from '../../refunds/service.ts';
import { findRefund, refundsOfPayment, type RefundRow } from '../../refunds/store.ts';
import { allow, FormRefused, type DashContext } from '../context.ts';
import { fieldsOf, listQueryOf, optional, parseAmount } from '../forms.ts';
import { alertBox, toPage } from '../widgets.ts';
import { EVIDENCE_KEYS } from './dispute-views.ts';
import { paymentDetail, paymentPath, paymentsList, type Confirm, type PaymentView } from './views.ts';

const DONE: Record<string, string> = {
  refund_pending: 'Refund created. It is pending until the card processor confirms it, and shows as succeeded here once it has (reload to see it).',
  refund_succeeded: 'Refund made: the card processor has confirmed it.',
  refund_failed: 'The card processor refused the refund: its reason is shown below. Nothing was taken from the payment.',
  refund_cancelled: 'Refund cancelled. Its amount can be refunded again.',
  evidence_saved: 'Evidence saved. It has not been sent yet: submit it before the due date.',
  evidence_submitted: 'Evidence submitted to the card processor.',
  evidence_sending: 'The card processor has not answered yet. The evidence is recorded as being submitted and the service finishes sending it within a few minutes: do not submit it again.',
  dispute_accepted: 'Dispute accepted: it is closed as lost.',
  dispute_closing: 'The card processor has not answered yet. The dispute is recorded as being accepted and the service finishes closing it within a few minutes.',
  review_approved: 'Review approved: the payment is charged.',
  review_refused: 'Review refused: the authorisation is released and the payment failed.',
  review_pending: 'Your decision is recorded; the card processor has not answered yet. The service finishes it within a few minutes.',
};

/**
 * The notice of `?done=`. A refund answered pending that has settled since the redirect (the page
 * was reloaded) is told as it ended, so the page never says pending beside a settled refund.
 */
function noticeOf(req: Request, refunds: readonly RefundRow[]) {
  let code = formText(req.query.done);
  const last = refunds.at(-1);
  if (code === 'refund_pending' && last && last.status !== 'PENDING') code = `refund_${last.status.toLowerCase()}`;
  if (!Object.hasOwn(DONE, code)) return alertBox('success', null);
  return alertBox(code === 'refund_failed' ? 'error' : 'success', DONE[code]);
}


/** The evidence fields of a form: an empty field clears the saved value; a field not sent is left as it is. */
function evidenceOf(v: Record<string, string>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const k of EVIDENCE_KEYS) {
    if (v[k] === undefined) continue;
    // Browsers send a textarea's line breaks as CRLF; the length bounds count them as one character.
    const text = v[k].replace(/\r\n?/g, '\n').trim();
    out[k] = text === '' ? null : text;
  }
  return out;
}

/** `evidence[customer_name]` is the form's `customer_name`; any other problem is the form's. */
const evidenceParam = (param: string | undefined) => /^evidence\[([a-z_]+)\]$/.exec(param ?? '')?.[1];

/** The payments filter's email (the dashboard's own): checked as the API checks a query's text. */
const EmailFilter = z.strictObject({ customer: text(254) });

const processorSilent = (err: unknown) => err instanceof ApiError && err.code === 'service_unavailable';

/**
 * /dashboard/payments: the list (status, customer), and a payment's page with where it came from,
 * its refunds (create, cancel) and its disputes (evidence, submit, accept), each changed through
 * the refunds and disputes services of the API.
 */
export function paymentsPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;

  const load = async (res: Response, id: string): Promise<PaymentRow> => {
    const row = await findPayment(s.sql, ctx.owner(res), pathId('pay', 'payment', id));
    if (!row) throw resourceMissing('payment', id);
    return row;
  };

  /** The page of a payment, read afresh; `extra` is what a refused form brings back. */
  const show = async (req: Request, res: Response, id: string, extra: Partial<PaymentView> = {}, status = 200) => {
    const o = ctx.owner(res);
    const payment = await load(res, id);
    const [refunds, disputes, session, knownCustomers] = await Promise.all([
      refundsOfPayment(s.sql, o, payment.id),
      listDisputes(s.sql, o, { limit: 10, payment_id: payment.id }),
      payment.checkout_session_id ? findSession(s.sql, o, payment.checkout_session_id) : undefined,
      existingCustomerIds(s.sql, o, [payment.customer_id]),
    ]);
    const view: PaymentView = {
      payment,
      session: session ?? null,
      knownCustomers,
      receiptUrl: presentPayment(payment, s.config.checkoutUrl).receipt_url,
      refunds,
      disputes: disputes.slice(0, 10),
      notice: noticeOf(req, refunds),
      confirm: confirmOf(req, refunds, disputes),
      canReview: can(ctx.session(res).role, 'fraud.manage'),
      ...extra,
    };
    await ctx.render(req, res, (f) => paymentDetail(view, f), status);
  };

  r.get('/', allow('read'), async (req, res) => {
    // The customer filter takes a customer id, or an email (the payer's, or the customer's on file).
    const { customer, ...query } = listQueryOf(req);
    const typed = formText(customer).trim();
    const email = typed.includes('@') ? validate(EmailFilter, { customer: typed }, 'query').customer : undefined;
    const q = parseListQuery(ListPayments, email || !typed ? query : { ...query, customer: typed });
    const o = ctx.owner(res);
    const page = toPage(await listPayments(s.sql, o, { ...q, email }), q);
    const knownCustomers = await existingCustomerIds(s.sql, o, page.rows.map((p) => p.customer_id));
    const limit = req.query.limit ? String(q.limit) : undefined;
    await ctx.render(req, res, () => paymentsList(page, { status: q.status, customer: email ?? q.customer }, knownCustomers, limit, !!(q.starting_after || q.ending_before)));
  });

  r.get('/:id', allow('read'), async (req, res) => show(req, res, req.params.id));

  // ---- Refunds

  r.post('/:id/refunds', allow('refunds.create'), async (req, res, next) => {
    const p = await load(res, req.params.id);
    return ctx.action(
      async (req, res, se) => {
        const v = fieldsOf(req);
        const amount = optional(v.amount);
        let input = validate(CreateRefund, {
          payment_id: p.id,
          amount: amount === undefined ? undefined : parseAmount(amount, p.currency),
          reason: optional(v.reason),
        });
        if (se.role === 'support') input = await withinSupportLimit(s, se.account_id, ctx.owner(res), p, input);
        const refund = await createRefund(s, ctx.owner(res), input, req.log, ctx.actor(req, res));
        return { redirect: `${paymentPath(p.id)}?done=refund_${refund.status.toLowerCase()}` };
      },
      // The refusal beside the amount: too much, nothing left, or a payment that cannot be refunded.
      (req, res, err) =>
        show(req, res, p.id, { refundForm: { values: fieldsOf(req), error: { message: err.message, param: err.param === 'payment_id' ? 'amount' : err.param } } }, err.status),
    )(req, res, next);
  });

  const refundOf = async (res: Response, p: PaymentRow, id: string): Promise<RefundRow> => {
    const row = await findRefund(s.sql, ctx.owner(res), pathId('re', 'refund', id));
    if (!row || row.payment_id !== p.id) throw resourceMissing('refund', id);
    return row;
  };

  r.post('/:id/refunds/:refundId/cancel', allow('refunds.create'), async (req, res, next) => {
    const p = await load(res, req.params.id);
    const refund = await refundOf(res, p, req.params.refundId);
    return ctx.action(
      async () => {
        try {
          await cancelRefund(s, ctx.owner(res), refund.id, req.log);
        } catch (err) {
          if (processorSilent(err)) throw new FormRefused(503, 'The card processor did not answer', `${(err as Error).message} Nothing was changed.`);
          throw err;
        }
        return { redirect: `${paymentPath(p.id)}?done=refund_cancelled` };
      },
      (req, res, err) => show(req, res, p.id, { problem: err.message }, err.status),
    )(req, res, next);
  });

  // ---- Disputes

  const disputeOf = async (res: Response, p: PaymentRow, id: string): Promise<DisputeRow> => {
    const row = await findDispute(s.sql, ctx.owner(res), pathId('dp', 'dispute', id));
    if (!row || row.payment_id !== p.id) throw resourceMissing('dispute', id);
    return row;
  };

  r.post('/:id/disputes/:disputeId', allow('disputes.manage'), async (req, res, next) => {
    const p = await load(res, req.params.id);
    const dispute = await disputeOf(res, p, req.params.disputeId);
    return ctx.action(
      async () => {
        const v = fieldsOf(req);
        const submit = v.intent === 'submit';
        const input = validate(UpdateDispute, { evidence: evidenceOf(v), ...(submit ? { submit: true } : {}) });
        try {
          await updateDispute(s, ctx.owner(res), dispute.id, input, req.log, ctx.actor(req, res));
        } catch (err) {
          // The submission is committed before the processor is called: the service finishes it.
          if (submit && processorSilent(err)) return { redirect: `${paymentPath(p.id)}?done=evidence_sending` };
          throw err;
        }
        return { redirect: `${paymentPath(p.id)}?done=${submit ? 'evidence_submitted' : 'evidence_saved'}` };
      },
      (req, res, err) =>
        show(req, res, p.id, { evidence: { disputeId: dispute.id, state: { values: fieldsOf(req), error: { message: err.message, param: evidenceParam(err.param) } } } }, err.status),
    )(req, res, next);
  });

  r.post('/:id/disputes/:disputeId/close', allow('disputes.manage'), async (req, res, next) => {
    const p = await load(res, req.params.id);
    const dispute = await disputeOf(res, p, req.params.disputeId);
    return ctx.action(
      async () => {
        try {
          await closeDispute(s, ctx.owner(res), dispute.id, req.log, ctx.actor(req, res));
        } catch (err) {
          if (processorSilent(err)) return { redirect: `${paymentPath(p.id)}?done=dispute_closing` };
          throw err;
        }
        return { redirect: `${paymentPath(p.id)}?done=dispute_accepted` };
      },
      (req, res, err) => show(req, res, p.id, { problem: err.message }, err.status),
    )(req, res, next);
  });

  return r;
}

/**
 * The support role refunds at most the owner's limit of the payment's currency at once (team
 * settings; none set: no refund). An empty amount (all that is left) is made explicit first, so a
 * refund cancelled meanwhile cannot make it larger than what was checked.
 */
async function withinSupportLimit(s: DashContext['s'], accountId: string, o: Owner, p: PaymentRow, input: CreateRefund): Promise<CreateRefund> {
  const limit = (await getRefundLimits(s.sql, accountId))[p.currency];
  const taken = (await refundsOfPayment(s.sql, o, p.id)).filter((x) => x.status === 'PENDING' || x.status === 'SUCCEEDED').reduce((n, x) => n + x.amount_cents, 0);
  const amount = input.amount ?? p.amount_cents - taken;
  if (limit === undefined) throw new FormRefused(403, 'Over your refund limit', `The Support role cannot refund in ${p.currency.toUpperCase()}: the owner has set no refund limit for it.`);
  if (amount > limit) {
    throw new ApiError('forbidden', `The Support role may refund at most ${formatAmount(limit, p.currency)} at once. Ask an owner or administrator for a larger refund.`, 'amount');
  }
  return amount > 0 ? { ...input, amount } : input;
}

/** The confirmation a link asked for, when what it names can still be done. */
function confirmOf(req: Request, refunds: readonly RefundRow[], disputes: readonly DisputeRow[]): Confirm | null {
  const what = formText(req.query.confirm);
  if (what === 'cancel-refund') {
    const refund = refunds.find((x) => x.id === formText(req.query.refund) && x.status === 'PENDING');
    return refund ? { kind: 'cancel-refund', refund } : null;
  }
  if (what === 'accept-dispute') {
    const dispute = disputes.find((x) => x.id === formText(req.query.dispute) && x.status === 'NEEDS_RESPONSE' && !x.pending_action);
    return dispute ? { kind: 'accept-dispute', dispute } : null;
  }
  return null;
}
