import { Router } from 'express';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentAnalytics, presentPaymentLink } from './presenter.ts';
import { CreatePaymentLink, ListPaymentLinks, UpdatePaymentLink } from './schema.ts';
import * as service from './service.ts';
import * as store from './store.ts';
import type { PaymentLinkRow } from './store.ts';

/** /v1/payment-links */
export function paymentLinksRouter(s: Services): Router {
  const r = Router();
  const linkId = (id: string) => pathId('pl', 'payment_link', id);
  const present = (row: PaymentLinkRow) => presentPaymentLink(row, s.config.publicLinkUrl);

  r.post('/', async (req, res) => {
    const input = validate(CreatePaymentLink, req.body);
    res.json(present(await service.createLink(s, req.auth, input)));
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListPaymentLinks, req.query);
    const rows = await store.listLinks(s.sql, req.auth, q);
    res.json(toList(rows, q, '/v1/payment-links', present));
  });

  r.get('/:id', async (req, res) => {
    res.json(present(await service.getLink(s, req.auth, linkId(req.params.id))));
  });

  r.patch('/:id', async (req, res) => {
    const patch = validate(UpdatePaymentLink, req.body);
    res.json(present(await service.updateLink(s, req.auth, linkId(req.params.id), patch)));
  });

  r.get('/:id/analytics', async (req, res) => {
    const { link, bySource } = await service.linkAnalytics(s, req.auth, linkId(req.params.id));
    res.json(presentAnalytics(link, bySource));
  });

  return r;
}
