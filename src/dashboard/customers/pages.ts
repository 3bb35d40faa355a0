import { Router, type Request, type Response } from 'express';
import { CreateCustomer, ListCustomers, UpdateCustomer } from '../../customers/schema.ts';
import * as customers from '../../customers/store.ts';
import type { CustomerRow } from '../../customers/store.ts';
import { resourceMissing, type ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { listPayments } from '../../payments/store.ts';
import { twinAtInsert } from '../../processor/customers.ts';
import { formText } from '../../pages/index.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { fieldsOf, listQueryOf, metadataPatch, metadataText, optional, orNull, parseMetadata } from '../forms.ts';
import { toPage } from '../widgets.ts';
import { customerDetail, customerForm, customerPath, customersList } from './views.ts';

const DONE = { created: 'Customer created.', updated: 'Changes saved.', deleted: 'Customer deleted.' };

/** The form of a customer as it is stored. */
const valuesOf = (c: CustomerRow): Record<string, string> => ({
  email: c.email,
  first_name: c.first_name,
  last_name: c.last_name,
  phone: c.phone ?? '',
  company_name: c.company_name ?? '',
  notes: c.notes ?? '',
  metadata: metadataText(c.metadata),
});

/**
 * /dashboard/customers: the list (filter by email), a customer with their payments, create, edit
 * and delete, through the store functions and schemas of /v1/customers.
 */
export function customersPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const customerId = (id: string) => pathId('cus', 'customer', id);
  const load = async (res: Response, id: string) => {
    const row = await customers.findCustomer(s.sql, ctx.owner(res), customerId(id));
    if (!row) throw resourceMissing('customer', id);
    return row;
  };

  r.get('/', allow('read'), async (req, res) => {
    const q = parseListQuery(ListCustomers, listQueryOf(req));
    const page = toPage(await customers.listCustomers(s.sql, ctx.owner(res), q), q);
    await ctx.render(req, res, () => customersList(page, { email: q.email }, !!(q.starting_after || q.ending_before), doneNotice(req, DONE)));
  });

  r.get('/new', allow('customers.write'), async (req, res) => {
    await ctx.render(req, res, (f) => customerForm(null, { values: {} }, f));
  });

  const showForm = (c: CustomerRow | null) => async (req: Request, res: Response, err: ApiError) =>
    ctx.render(req, res, (f) => customerForm(c, { values: fieldsOf(req), error: err }, f), err.status);

  r.post(
    '/', allow('customers.write'),
    ctx.action(
      async (req, res) => {
        const v = fieldsOf(req);
        const input = validate(CreateCustomer, {
          email: (v.email ?? '').trim(),
          first_name: optional(v.first_name),
          last_name: optional(v.last_name),
          phone: optional(v.phone),
          company_name: optional(v.company_name),
          notes: optional(v.notes),
          metadata: parseMetadata(v.metadata),
        });
        const owner = ctx.owner(res);
        const row = await customers.insertCustomer(s.sql, owner, input, twinAtInsert(s, owner.livemode));
        return { redirect: `${customerPath(row.id)}?done=created` };
      },
      showForm(null),
    ),
  );

  r.get('/:id', allow('read'), async (req, res) => {
    const c = await load(res, req.params.id);
    const payments = await listPayments(s.sql, ctx.owner(res), { limit: 10, customer: c.id });
    await ctx.render(req, res, (f) => customerDetail(c, payments.slice(0, 10), f, doneNotice(req, DONE), formText(req.query.confirm) === 'delete'));
  });

  r.get('/:id/edit', allow('customers.write'), async (req, res) => {
    const c = await load(res, req.params.id);
    await ctx.render(req, res, (f) => customerForm(c, { values: valuesOf(c) }, f));
  });

  r.post('/:id', allow('customers.write'), async (req, res, next) => {
    const c = await load(res, req.params.id);
    return ctx.action(
      async () => {
        const v = fieldsOf(req);
        const patch = validate(UpdateCustomer, {
          email: (v.email ?? '').trim(),
          first_name: (v.first_name ?? '').trim(),
          last_name: (v.last_name ?? '').trim(),
          phone: orNull(v.phone),
          company_name: orNull(v.company_name),
          notes: orNull(v.notes),
          metadata: metadataPatch(c.metadata, parseMetadata(v.metadata)),
        });
        const row = await customers.updateCustomer(s.sql, ctx.owner(res), c.id, patch);
        if (!row) throw resourceMissing('customer', c.id);
        return { redirect: `${customerPath(row.id)}?done=updated` };
      },
      showForm(c),
    )(req, res, next);
  });

  r.post(
    '/:id/delete', allow('customers.write'),
    ctx.action(async (req, res) => {
      const id = customerId(req.params.id as string);
      if (!(await customers.deleteCustomer(s.sql, ctx.owner(res), id))) throw resourceMissing('customer', id);
      return { redirect: '/dashboard/customers?done=deleted' };
    }),
  );

  return r;
}
