import { Router } from 'express';
import { apiActor } from '../auth/middleware.ts';
import { resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentDispute } from './presenter.ts';
import { CloseDispute, ListDisputes, UpdateDispute } from './schema.ts';
import * as service from './service.ts';
import * as store from './store.ts';

/** Disputes are opened by the processor (a chargeback); the merchant answers with evidence or accepts the loss. */
export function disputesRouter(s: Services): Router {
  const r = Router();
  const disputeId = (id: string) => pathId('dp', 'dispute', id);

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListDisputes, req.query);
    res.json(toList(await store.listDisputes(s.sql, req.auth, q), q, '/v1/disputes', presentDispute));
  });

  r.get('/:id', async (req, res) => {
    const row = await store.findDispute(s.sql, req.auth, disputeId(req.params.id));
    if (!row) throw resourceMissing('dispute', req.params.id);
    res.json(presentDispute(row));
  });

  r.patch('/:id', async (req, res) => {
    const id = disputeId(req.params.id);
    const input = validate(UpdateDispute, req.body);
    res.json(presentDispute(await service.updateDispute(s, req.auth, id, input, req.log, apiActor(req))));
  });

  r.post('/:id/close', async (req, res) => {
    const id = disputeId(req.params.id);
    validate(CloseDispute, req.body);
    res.json(presentDispute(await service.closeDispute(s, req.auth, id, req.log, apiActor(req))));
  });

  return r;
}
