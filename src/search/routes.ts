import { Router } from 'express';
import { presentSession } from '../checkout/presenter.ts';
import { presentCustomer } from '../customers/presenter.ts';
import { presentInvoice } from '../invoices/presenter.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { presentPayment } from '../payments/presenter.ts';
import type { Services } from '../services.ts';
import { RESOURCES, type Resource } from './fields.ts';
import { searchQuerySchema } from './schema.ts';
import { searchRecords } from './service.ts';
import type { SearchRows } from './store.ts';

/** How each resource's rows are presented: the same functions as its own routes. */
export function searchPresenters(s: Services): { [R in Resource]: (row: SearchRows[R]) => unknown } {
  return {
    customers: presentCustomer,
    payments: (row) => presentPayment(row, s.config.checkoutUrl),
    invoices: (row) => presentInvoice(row, s.config.invoiceUrl),
    'checkout-sessions': (row) => presentSession(row, s.config.checkoutUrl),
  };
}

/** `GET /v1/search/{customers,payments,invoices,checkout-sessions}?query=…` (docs/search.md). */
export function searchRouter(s: Services): Router {
  const r = Router();
  const present = searchPresenters(s);
  for (const resource of RESOURCES) {
    const schema = searchQuerySchema(resource);
    r.get(`/${resource}`, async (req, res) => {
      const q = parseListQuery(schema, req.query);
      const rows = await searchRecords(s.sql, req.auth, resource, q.query, q);
      res.json(toList(rows, q, `/v1/search/${resource}`, present[resource] as (row: SearchRows[Resource]) => unknown));
    });
  }
  return r;
}
