import { Router, type Request, type Response } from 'express';
import { listCustomers } from '../../customers/store.ts';
import { listEmails } from '../../email/store.ts';
import { presentInvoice } from '../../invoices/presenter.ts';
import { CreateInvoice, ListInvoices, MAX_LINE_ITEMS, NoParams, UpdateInvoice } from '../../invoices/schema.ts';
import * as service from '../../invoices/service.ts';
import { billedCustomers, listInvoices, paymentsOfInvoice, type BilledCustomer, type InvoiceLineItem, type InvoiceRow } from '../../invoices/store.ts';
import type { ApiError } from '../../lib/errors.ts';
import { invalidParam } from '../../lib/errors.ts';
import type { Owner } from '../../lib/owner.ts';
import { customerOf, parseListQuery } from '../../lib/pagination.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { html } from '../../pages/html.ts';
import { formText } from '../../pages/index.ts';
import type { Services } from '../../services.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { amountText, checked, fieldsOf, listQueryOf, metadataPatch, metadataText, optional, orNull, parseAmount, parseMetadata, parseUtcDateTime, utcDateTimeText } from '../forms.ts';
import { toPage, type FormState } from '../widgets.ts';
import {
  BASE,
  EDIT_LINE_ROWS,
  NEW_LINE_ROWS,
  editInvoiceForm,
  invoiceDetail,
  invoicePath,
  invoicesList,
  lineField,
  newInvoiceForm,
} from './views.ts';

const DONE = {
  created: 'Draft created. Finalize it to give it a number, or send it to the customer.',
  updated: 'Changes saved.',
  lines: 'Line items saved.',
  finalized: 'Invoice finalized: it has its number and can be paid once sent.',
  sent: 'Invoice emailed to the customer. Its page is live.',
  voided: 'Invoice voided: it can no longer be paid.',
  uncollectible: 'Invoice marked uncollectible: reminders stopped.',
  deleted: 'Draft deleted.',
};

const CONFIRMS = ['void', 'uncollectible', 'delete'] as const;

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

/** Currency as typed, the way the API wants it (lowercase). */
const currencyOf = (v: Record<string, string>) => (v.currency ?? '').trim().toLowerCase();

/** The rows of a form whose line has anything typed in it (an empty row is left out). */
function filledRows(v: Record<string, string>, rows: readonly number[]): number[] {
  return rows.filter((r) => (['name', 'quantity', 'amount'] as const).some((f) => (v[lineField(r, f)] ?? '').trim() !== ''));
}

/**
 * The typed lines as the API's `line_items` (amounts in major units, a blank quantity is 1). `at`
 * is the API index of the first: a problem found here names the API's parameter, as the schema does.
 */
function readLines(v: Record<string, string>, rows: readonly number[], currency: string, at: number): unknown[] {
  return rows.map((r, k) => {
    const quantity = (v[lineField(r, 'quantity')] ?? '').trim();
    return {
      name: (v[lineField(r, 'name')] ?? '').trim(),
      // Anything but a number goes to the schema as typed, which names the problem.
      quantity: quantity === '' ? 1 : /^-?\d+(\.\d+)?$/.test(quantity) ? Number(quantity) : quantity,
      amount: parseAmount(v[lineField(r, 'amount')], currency, `line_items[${at + k}][amount]`),
    };
  });
}

/**
 * The API's problem with line `at + k` named on the form row it came from (empty rows were left
 * out, so the API's index and the row differ): `line_items[1][amount]` is beside row 2's amount.
 */
function onFormRows(err: ApiError, rows: readonly number[], at: number): FormState['error'] {
  const m = /^line_items\[(\d+)\](.*)$/.exec(err.param ?? '');
  const row = m ? rows[Number(m[1]) - at] : undefined;
  if (!m || row === undefined) return { message: err.message, param: err.param };
  const from = `line_items[${m[1]}]`;
  const to = `line_items[${row}]`;
  return { message: err.message.replaceAll(from, to), param: `${to}${m[2]}` };
}

/** A minimum payment typed in major units; blank is none. */
const minimumOf = (v: Record<string, string>, currency: string) =>
  optional(v.minimum_payment_cents) === undefined ? null : parseAmount(v.minimum_payment_cents, currency, 'minimum_payment_cents');

/** The details form of a stored invoice. */
const detailValues = (inv: InvoiceRow): Record<string, string> => ({
  customer_id: inv.customer_id,
  currency: inv.currency,
  description: inv.description ?? '',
  due_date: utcDateTimeText(inv.due_date),
  allow_partial_payments: inv.allow_partial_payments ? 'on' : '',
  minimum_payment_cents: inv.minimum_payment_cents === null ? '' : amountText(inv.minimum_payment_cents, inv.currency),
  metadata: metadataText(inv.metadata),
});

/** The lines form of a stored invoice, rows `from` on. */
function lineValues(inv: InvoiceRow, from: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of range(from, EDIT_LINE_ROWS)) {
    const l = inv.line_items[r];
    if (!l) continue;
    out[lineField(r, 'name')] = l.name;
    out[lineField(r, 'quantity')] = String(l.quantity);
    out[lineField(r, 'amount')] = amountText(l.amount, inv.currency);
  }
  return out;
}

/** The first line of a lines form: a multiple of EDIT_LINE_ROWS below MAX_LINE_ITEMS (else null). */
function windowStart(text: string): number | null {
  if (!/^\d{1,3}$/.test(text)) return null;
  const n = Number(text);
  return n % EDIT_LINE_ROWS === 0 && n < MAX_LINE_ITEMS ? n : null;
}

/** A list query without the filters left at "Any" (an empty select sends `status=`). */

/**
 * /dashboard/invoices: the list (filter by status and customer), an invoice with its lines,
 * hosted page, reminders, payments and emails; create and edit a draft, finalize, send, void,
 * mark uncollectible and delete, through the service functions and schemas of /v1/invoices.
 */
export function invoicesPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const invoiceId = (id: string) => pathId('in', 'invoice', id);
  const load = (res: Response, id: string) => service.getInvoice(s, ctx.owner(res), invoiceId(id));
  /** The newest customers, offered in the customer field. */
  const newestCustomers = async (o: Owner): Promise<BilledCustomer[]> => (await listCustomers(s.sql, o, { limit: 50 })).slice(0, 50);

  r.get('/', allow('read'), async (req, res) => {
    const q = parseListQuery(ListInvoices, listQueryOf(req));
    const customerId = customerOf(q);
    const owner = ctx.owner(res);
    const page = toPage(await listInvoices(s.sql, owner, { ...q, customer_id: customerId }), q);
    const customers = new Map((await billedCustomers(s.sql, owner, page.rows.map((i) => i.customer_id))).map((c) => [c.id, c]));
    const filters = { status: q.status, customer_id: customerId };
    await ctx.render(req, res, () => invoicesList(page, customers, filters, !!(q.starting_after || q.ending_before), doneNotice(req, DONE)));
  });

  // ---- Create a draft.

  r.get('/new', allow('payments.write'), async (req, res) => {
    const customers = await newestCustomers(ctx.owner(res));
    const values = { currency: 'usd', customer_id: formText(req.query.customer_id).slice(0, 100) };
    await ctx.render(req, res, (f) => newInvoiceForm({ values }, customers, f));
  });

  r.post(
    '/', allow('payments.write'),
    ctx.action(
      async (req, res) => {
        const v = fieldsOf(req);
        const currency = currencyOf(v);
        const input = validate(CreateInvoice, {
          customer_id: (v.customer_id ?? '').trim(),
          currency,
          line_items: readLines(v, filledRows(v, range(0, NEW_LINE_ROWS)), currency, 0),
          description: optional(v.description),
          due_date: parseUtcDateTime(v.due_date, 'due_date') ?? undefined,
          allow_partial_payments: checked(v.allow_partial_payments),
          minimum_payment_cents: minimumOf(v, currency) ?? undefined,
          metadata: parseMetadata(v.metadata),
        });
        const row = await service.createInvoice(s, ctx.owner(res), input);
        return { redirect: `${invoicePath(row.id)}?done=created` };
      },
      async (req, res, err) => {
        const v = fieldsOf(req);
        const customers = await newestCustomers(ctx.owner(res));
        const error = onFormRows(err, filledRows(v, range(0, NEW_LINE_ROWS)), 0);
        await ctx.render(req, res, (f) => newInvoiceForm({ values: v, error }, customers, f), err.status);
      },
    ),
  );

  // ---- An invoice, and what its status allows.

  /** The invoice's page; `error` is the API's refusal of an action just tried. */
  const show = async (req: Request, res: Response, inv: InvoiceRow, error: string | null = null, status = 200) => {
    const owner = ctx.owner(res);
    const [customers, payments, emails] = await Promise.all([
      billedCustomers(s.sql, owner, [inv.customer_id]),
      paymentsOfInvoice(s.sql, owner, inv.id),
      listEmails(s.sql, owner, { limit: 20, related_object: inv.id }),
    ]);
    const asked = formText(req.query.confirm);
    const confirm = req.method === 'GET' ? (CONFIRMS.find((c) => c === asked) ?? null) : null;
    await ctx.render(
      req,
      res,
      (f) =>
        invoiceDetail(
          {
            inv,
            api: presentInvoice(inv, s.config.invoiceUrl),
            customer: customers[0] ?? null,
            payments,
            emails: emails.slice(0, 20),
            notice: error ? html`` : doneNotice(req, DONE),
            error,
            confirm,
          },
          f,
        ),
      status,
    );
  };

  /** An action's refusal by the API, on the invoice's page (unchanged); a missing invoice is the 404 page. */
  const refused = async (req: Request, res: Response, err: ApiError) => {
    if (err.code === 'resource_missing') throw err;
    await show(req, res, await load(res, req.params.id as string), err.message, err.status);
  };

  r.get('/:id', allow('read'), async (req, res) => {
    await show(req, res, await load(res, req.params.id));
  });

  const TRANSITIONS: Array<[string, (s: Services, o: Owner, id: string) => Promise<InvoiceRow>, keyof typeof DONE]> = [
    ['finalize', service.finalizeInvoice, 'finalized'],
    ['send', service.sendInvoice, 'sent'],
    ['void', service.voidInvoice, 'voided'],
    ['mark-uncollectible', service.markUncollectible, 'uncollectible'],
  ];
  for (const [action, run, done] of TRANSITIONS) {
    r.post(
      `/:id/${action}`, allow('payments.write'),
      ctx.action(async (req, res) => {
        validate(NoParams, fieldsOf(req));
        const row = await run(s, ctx.owner(res), invoiceId(req.params.id as string));
        return { redirect: `${invoicePath(row.id)}?done=${done}` };
      }, refused),
    );
  }

  r.post(
    '/:id/delete', allow('payments.write'),
    ctx.action(async (req, res) => {
      validate(NoParams, fieldsOf(req));
      await service.deleteInvoice(s, ctx.owner(res), invoiceId(req.params.id as string));
      return { redirect: `${BASE}?done=deleted` };
    }, refused),
  );

  // ---- Edit a draft: its details, and its lines a window of EDIT_LINE_ROWS at a time.

  const editPage = async (req: Request, res: Response, inv: InvoiceRow, forms: { details?: FormState; lines?: FormState; from: number }, status = 200) => {
    const customers = await newestCustomers(ctx.owner(res));
    const details = forms.details ?? { values: detailValues(inv) };
    const lines = forms.lines ?? { values: lineValues(inv, forms.from) };
    await ctx.render(req, res, (f) => editInvoiceForm({ inv, customers, details, lines, from: forms.from }, f, MAX_LINE_ITEMS), status);
  };

  r.get('/:id/edit', allow('payments.write'), async (req, res) => {
    const inv = await load(res, req.params.id);
    if (inv.status !== 'DRAFT') throw service.invalidState(inv, 'edited', 'DRAFT invoices');
    await editPage(req, res, inv, { from: windowStart(formText(req.query.from)) ?? 0 });
  });

  r.post('/:id', allow('payments.write'), async (req, res, next) => {
    const inv = await load(res, req.params.id);
    return ctx.action(
      async () => {
        const v = fieldsOf(req);
        const currency = currencyOf(v);
        const dueText = (v.due_date ?? '').trim();
        const patch = validate(UpdateInvoice, {
          customer_id: (v.customer_id ?? '').trim(),
          currency,
          description: orNull(v.description),
          // Unchanged, the due date keeps its seconds (the field shows minutes).
          due_date: dueText === utcDateTimeText(inv.due_date) ? undefined : parseUtcDateTime(dueText, 'due_date'),
          allow_partial_payments: checked(v.allow_partial_payments),
          minimum_payment_cents: minimumOf(v, currency),
          metadata: metadataPatch(inv.metadata, parseMetadata(v.metadata)),
        });
        const row = await service.updateInvoice(s, ctx.owner(res), inv.id, patch);
        return { redirect: `${invoicePath(row.id)}?done=updated` };
      },
      async (req2, res2, err) => {
        if (err.code === 'resource_missing') throw err;
        await editPage(req2, res2, inv, { details: { values: fieldsOf(req2), error: err }, from: 0 }, err.status);
      },
    )(req, res, next);
  });

  r.post('/:id/lines', allow('payments.write'), async (req, res, next) => {
    const inv = await load(res, req.params.id);
    const v = fieldsOf(req);
    const from = windowStart(v.from ?? '');
    const rows = filledRows(v, range(from ?? 0, EDIT_LINE_ROWS));
    return ctx.action(
      async () => {
        if (from === null) throw invalidParam('from', `The lines form must start at a multiple of ${EDIT_LINE_ROWS} below ${MAX_LINE_ITEMS}. Open the form again.`);
        const typed = readLines(v, rows, inv.currency, from) as InvoiceLineItem[];
        const line_items = [...inv.line_items.slice(0, from), ...typed, ...inv.line_items.slice(from + EDIT_LINE_ROWS)];
        const patch = validate(UpdateInvoice, { line_items });
        const row = await service.updateInvoice(s, ctx.owner(res), inv.id, patch);
        return { redirect: `${invoicePath(row.id)}?done=lines` };
      },
      async (req2, res2, err) => {
        if (err.code === 'resource_missing') throw err;
        const at = from ?? 0;
        await editPage(req2, res2, inv, { lines: { values: v, error: onFormRows(err, rows, at) }, from: at }, err.status);
      },
    )(req, res, next);
  });

  return r;
}
