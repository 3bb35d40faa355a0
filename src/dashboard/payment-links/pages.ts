import { Router, type Request, type Response } from 'express';
import type { ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { html } from '../../pages/html.ts';
import { formText } from '../../pages/index.ts';
import { ListPaymentLinks, UpdatePaymentLink } from '../../payment-links/schema.ts';
import { createLink, getLink, linkAnalytics, updateLink } from '../../payment-links/service.ts';
import { listLinks, type PaymentLinkRow } from '../../payment-links/store.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { fieldsOf, listQueryOf } from '../forms.ts';
import { qrSvg, toPage } from '../widgets.ts';
import { createInput, linkForm, linkValues, updateInput } from './form.ts';
import { linkDetail, linkPath, linksList, qrUrl } from './views.ts';

const DONE = {
  created: 'Payment link created.',
  updated: 'Changes saved.',
  cancelled: 'Payment link deactivated: its page takes no more payments.',
  reactivated: 'Payment link reactivated: it takes payments again.',
};

/**
 * /dashboard/payment-links: the list (filter by status and type), a link with its share URLs, QR
 * code, counters and analytics by source, create, edit, deactivate and reactivate, through the
 * service functions and schemas of /v1/payment-links.
 */
export function paymentLinksPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const linkId = (id: string) => pathId('pl', 'payment_link', id);
  const load = (res: Response, id: string) => getLink(s, ctx.owner(res), linkId(id));

  r.get('/', allow('read'), async (req, res) => {
    const q = parseListQuery(ListPaymentLinks, listQueryOf(req));
    const page = toPage(await listLinks(s.sql, ctx.owner(res), q), q);
    await ctx.render(req, res, () => linksList(page, { status: q.status, type: q.type }, !!(q.starting_after || q.ending_before), doneNotice(req, DONE)));
  });

  r.get('/new', allow('payments.write'), async (req, res) => {
    await ctx.render(req, res, (f) => linkForm(null, { values: { currency: 'usd', type: 'MULTI' } }, f));
  });

  const showForm = (l: PaymentLinkRow | null) => async (req: Request, res: Response, err: ApiError) =>
    ctx.render(req, res, (f) => linkForm(l, { values: fieldsOf(req), error: err }, f), err.status);

  r.post(
    '/', allow('payments.write'),
    ctx.action(
      async (req, res) => {
        const row = await createLink(s, ctx.owner(res), createInput(fieldsOf(req)));
        return { redirect: `${linkPath(row.id)}?done=created` };
      },
      showForm(null),
    ),
  );

  /** The link's page; `error` is the API's refusal of an action just tried. */
  const show = async (req: Request, res: Response, id: string, error: string | null = null, status = 200) => {
    const { link, bySource } = await linkAnalytics(s, ctx.owner(res), linkId(id));
    const confirmCancel = !error && formText(req.query.confirm) === 'cancel';
    const notice = error ? html`` : doneNotice(req, DONE);
    await ctx.render(req, res, (f) => linkDetail({ link, bySource, publicLinkUrl: s.config.publicLinkUrl, confirmCancel, notice, error }, f), status);
  };

  r.get('/:id', allow('read'), async (req, res) => {
    await show(req, res, req.params.id);
  });

  r.get('/:id/qr.svg', allow('read'), async (req, res) => {
    const link = await load(res, req.params.id);
    const svg = await qrSvg(qrUrl(s.config.publicLinkUrl, link), 256);
    if (formText(req.query.download) === '1') res.attachment(`payment-link-${link.path}-qr.svg`);
    res.type('image/svg+xml').send(svg);
  });

  r.get('/:id/edit', allow('payments.write'), async (req, res) => {
    const l = await load(res, req.params.id);
    await ctx.render(req, res, (f) => linkForm(l, { values: linkValues(l) }, f));
  });

  r.post('/:id', allow('payments.write'), async (req, res, next) => {
    const l = await load(res, req.params.id);
    return ctx.action(
      async () => {
        const row = await updateLink(s, ctx.owner(res), l.id, updateInput(l, fieldsOf(req)));
        return { redirect: `${linkPath(row.id)}?done=updated` };
      },
      showForm(l),
    )(req, res, next);
  });

  /** Cancel and reactivate: PATCH with a status, the API's refusal shown on the link's page. */
  const setStatus = (status: 'CANCELLED' | 'ACTIVE', done: keyof typeof DONE) =>
    ctx.action(
      async (req, res) => {
        const row = await updateLink(s, ctx.owner(res), linkId(req.params.id as string), validate(UpdatePaymentLink, { status }));
        return { redirect: `${linkPath(row.id)}?done=${done}` };
      },
      async (req, res, err) => {
        if (err.code === 'resource_missing') throw err;
        await show(req, res, req.params.id as string, err.message, err.status);
      },
    );
  r.post('/:id/cancel', allow('payments.write'), setStatus('CANCELLED', 'cancelled'));
  r.post('/:id/reactivate', allow('payments.write'), setStatus('ACTIVE', 'reactivated'));

  return r;
}
