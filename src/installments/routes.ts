import { Router } from 'express';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentPlan } from './presenter.ts';
import { CancelInstallmentPlan, ListInstallmentPlans, UpdateInstallmentPlan } from './schema.ts';
import * as service from './service.ts';
import type { PlanWithParts } from './store.ts';

/** /v1/installment-plans: read, set metadata, cancel; plans are made by payers on the link and invoice pages. */
export function installmentPlansRouter(s: Services): Router {
  const r = Router();
  const planId = (id: string) => pathId('ip', 'installment_plan', id);
  const present = ({ plan, parts }: PlanWithParts) => presentPlan(plan, parts);

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListInstallmentPlans, req.query);
    res.json(toList(await service.listPlans(s, req.auth, q), q, '/v1/installment-plans', present));
  });

  r.get('/:id', async (req, res) => {
    res.json(present(await service.getPlan(s, req.auth, planId(req.params.id))));
  });

  r.patch('/:id', async (req, res) => {
    const id = planId(req.params.id);
    const input = validate(UpdateInstallmentPlan, req.body);
    res.json(present(await service.updatePlan(s, req.auth, id, input, req.log)));
  });

  r.post('/:id/cancel', async (req, res) => {
    const id = planId(req.params.id);
    validate(CancelInstallmentPlan, req.body);
    res.json(present(await service.cancelPlan(s, req.auth, id, req.log)));
  });

  return r;
}
