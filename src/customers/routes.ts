import { Router } from 'express';
import { resourceMissing } from '../lib/errors.ts';
import { deleted } from '../lib/objects.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import { twinAtInsert } from '../processor/customers.ts';
import type { Services } from '../services.ts';
import { presentCustomer } from './presenter.ts';
import { CreateCustomer, ListCustomers, UpdateCustomer } from './schema.ts';
import * as store from './store.ts';

export function customersRouter(s: Services): Router {
  const { sql } = s;
  const r = Router();

  r.post('/', async (req, res) => {
    const input = validate(CreateCustomer, req.body);
    res.json(presentCustomer(await store.insertCustomer(sql, req.auth, input, twinAtInsert(s, req.auth.livemode))));
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListCustomers, req.query);
    res.json(toList(await store.listCustomers(sql, req.auth, q), q, '/v1/customers', presentCustomer));
  });

  const customerId = (id: string) => pathId('cus', 'customer', id);

  r.get('/:id', async (req, res) => {
    const row = await store.findCustomer(sql, req.auth, customerId(req.params.id));
    if (!row) throw resourceMissing('customer', req.params.id);
    res.json(presentCustomer(row));
  });

  r.patch('/:id', async (req, res) => {
    const patch = validate(UpdateCustomer, req.body);
    const row = await store.updateCustomer(sql, req.auth, customerId(req.params.id), patch);
    if (!row) throw resourceMissing('customer', req.params.id);
    res.json(presentCustomer(row));
  });

  r.delete('/:id', async (req, res) => {
    if (!(await store.deleteCustomer(sql, req.auth, customerId(req.params.id)))) throw resourceMissing('customer', req.params.id);
    res.json(deleted('customer', req.params.id));
  });

  return r;
}
