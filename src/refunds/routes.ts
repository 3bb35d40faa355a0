import { Router } from 'express';
import { apiActor } from '../auth/middleware.ts';
import { resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentRefund } from './presenter.ts';
import { CancelRefund, CreateRefund, ListRefunds } from './schema.ts';
import * as service from './service.ts';
import * as store from './store.ts';

export function refundsRouter(s: Services): Router {
  const r = Router();
  const refundId = (id: string) => pathId('re', 'refund', id);

  r.post('/', async (req, res) => {
    const input = validate(CreateRefund, req.body);
    res.json(presentRefund(await service.createRefund(s, req.auth, input, req.log, apiActor(req))));
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListRefunds, req.query);
    res.json(toList(await store.listRefunds(s.sql, req.auth, q), q, '/v1/refunds', presentRefund));
  });

  r.get('/:id', async (req, res) => {
    const row = await store.findRefund(s.sql, req.auth, refundId(req.params.id));
    if (!row) throw resourceMissing('refund', req.params.id);
    res.json(presentRefund(row));
  });

  r.post('/:id/cancel', async (req, res) => {
    validate(CancelRefund, req.body);
    res.json(presentRefund(await service.cancelRefund(s, req.auth, refundId(req.params.id), req.log)));
  });

  return r;
}
