import { Router } from 'express';
import { resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentPayment } from './presenter.ts';
import { ListPayments } from './schema.ts';
import * as store from './store.ts';

/** Payments are read-only through the API: they are made on the hosted pages. */
export function paymentsRouter(s: Services): Router {
  const r = Router();
  const present = (row: store.PaymentRow) => presentPayment(row, s.config.checkoutUrl);

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListPayments, req.query);
    res.json(toList(await store.listPayments(s.sql, req.auth, q), q, '/v1/payments', present));
  });

  r.get('/:id', async (req, res) => {
    const row = await store.findPayment(s.sql, req.auth, pathId('pay', 'payment', req.params.id));
    if (!row) throw resourceMissing('payment', req.params.id);
    res.json(present(row));
  });

  return r;
}
