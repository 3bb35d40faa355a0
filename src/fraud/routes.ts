import { Router } from 'express';
import { apiActor } from '../auth/middleware.ts';
import { resourceMissing } from '../lib/errors.ts';
import { deleted } from '../lib/objects.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { unix } from '../lib/time.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentFraudListItem, presentFraudRule } from './presenter.ts';
import { CreateFraudListItem, CreateFraudRule, ListFraudListItems, ListFraudRules, TryFraudRule, UpdateFraudRule } from './schema.ts';
import { createListItem, createRule, deleteListItem, deleteRule, tryRule, updateRule, type FraudCaller, type Trial } from './service.ts';
import * as store from './store.ts';

/** The trial as the API answers it. */
export const presentTrial = (t: Trial) => ({
  object: 'fraud_rule_trial' as const,
  action: t.action,
  description: t.description,
  matched: t.matched,
  evaluated: t.evaluated,
  truncated: t.truncated,
  since: unix(t.since),
  examples: t.examples,
});

/** `/v1/fraud/rules` and `/v1/fraud/lists` (docs/fraud.md): every change audit-logged. */
export function fraudRouter(s: Services): Router {
  const r = Router();
  const caller = (req: Parameters<typeof apiActor>[0]): FraudCaller => ({ actor: apiActor(req), log: req.log });
  const ruleId = (id: string) => pathId('frl', 'fraud_rule', id);
  const itemId = (id: string) => pathId('fli', 'fraud_list_item', id);

  r.post('/rules', async (req, res) => {
    const input = validate(CreateFraudRule, req.body);
    res.json(presentFraudRule(await createRule(s, req.auth, input, caller(req))));
  });
  r.get('/rules', async (req, res) => {
    const q = parseListQuery(ListFraudRules, req.query);
    res.json(toList(await store.listRules(s.sql, req.auth, q), q, '/v1/fraud/rules', presentFraudRule));
  });
  r.post('/rules/try', async (req, res) => {
    const input = validate(TryFraudRule, req.body);
    res.json(presentTrial(await tryRule(s.sql, req.auth, input)));
  });
  r.get('/rules/:id', async (req, res) => {
    const row = await store.findRule(s.sql, req.auth, ruleId(req.params.id));
    if (!row) throw resourceMissing('fraud_rule', req.params.id);
    res.json(presentFraudRule(row));
  });
  r.patch('/rules/:id', async (req, res) => {
    const id = ruleId(req.params.id);
    const patch = validate(UpdateFraudRule, req.body);
    res.json(presentFraudRule(await updateRule(s, req.auth, id, patch, caller(req))));
  });
  r.delete('/rules/:id', async (req, res) => {
    await deleteRule(s, req.auth, ruleId(req.params.id), caller(req));
    res.json(deleted('fraud_rule', req.params.id));
  });

  r.post('/lists', async (req, res) => {
    const input = validate(CreateFraudListItem, req.body);
    res.json(presentFraudListItem(await createListItem(s, req.auth, input, caller(req))));
  });
  r.get('/lists', async (req, res) => {
    const q = parseListQuery(ListFraudListItems, req.query);
    res.json(toList(await store.listListItems(s.sql, req.auth, q), q, '/v1/fraud/lists', presentFraudListItem));
  });
  r.get('/lists/:id', async (req, res) => {
    const row = await store.findListItem(s.sql, req.auth, itemId(req.params.id));
    if (!row) throw resourceMissing('fraud_list_item', req.params.id);
    res.json(presentFraudListItem(row));
  });
  r.delete('/lists/:id', async (req, res) => {
    await deleteListItem(s, req.auth, itemId(req.params.id), caller(req));
    res.json(deleted('fraud_list_item', req.params.id));
  });
  return r;
}
