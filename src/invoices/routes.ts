import { Router } from 'express';
import { deleted } from '../lib/objects.ts';
import { customerOf, parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentInvoice } from './presenter.ts';
import { CreateInvoice, ListInvoices, NoParams, UpdateInvoice } from './schema.ts';
import * as service from './service.ts';
import * as store from './store.ts';
import type { InvoiceRow } from './store.ts';

/** /v1/invoices. */
export function invoicesRouter(s: Services): Router {
  const r = Router();
  const invoiceId = (id: string) => pathId('in', 'invoice', id);
  const present = (row: InvoiceRow) => presentInvoice(row, s.config.invoiceUrl);

  r.post('/', async (req, res) => {
    const input = validate(CreateInvoice, req.body);
    res.json(present(await service.createInvoice(s, req.auth, input)));
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListInvoices, req.query);
    const rows = await store.listInvoices(s.sql, req.auth, { ...q, customer_id: customerOf(q) });
    res.json(toList(rows, q, '/v1/invoices', present));
  });

  r.get('/:id', async (req, res) => {
    res.json(present(await service.getInvoice(s, req.auth, invoiceId(req.params.id))));
  });

  r.patch('/:id', async (req, res) => {
    const patch = validate(UpdateInvoice, req.body);
    res.json(present(await service.updateInvoice(s, req.auth, invoiceId(req.params.id), patch)));
  });

  r.delete('/:id', async (req, res) => {
    const row = await service.deleteInvoice(s, req.auth, invoiceId(req.params.id));
    res.json(deleted('invoice', row.id));
  });

  const transitions = {
    finalize: service.finalizeInvoice,
    send: service.sendInvoice,
    void: service.voidInvoice,
    'mark-uncollectible': service.markUncollectible,
  } as const;
  for (const [action, run] of Object.entries(transitions)) {
    r.post(`/:id/${action}`, async (req, res) => {
      validate(NoParams, req.body);
      res.json(present(await run(s, req.auth, invoiceId(req.params.id))));
    });
  }

  return r;
}
