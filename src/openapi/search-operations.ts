import { CheckoutSessionObject } from '../checkout/presenter.ts';
import { CustomerObject } from '../customers/presenter.ts';
import { InvoiceObject } from '../invoices/presenter.ts';
import { z } from 'zod';
import { objectName, schemaId } from '../lib/objects.ts';
import { PaymentObject } from '../payments/presenter.ts';
import { FIELDS, type Resource } from '../search/fields.ts';
import { searchQuerySchema } from '../search/schema.ts';
import type { Operation } from './operation.ts';

const LANGUAGE =
  'The `query` is clauses combined with `AND` and `OR` (AND binds tighter; two clauses side by side mean AND; parentheses group): ' +
  '`field:value` (`email:"ada@example.com"`, `status:"SUCCEEDED"`), comparisons of amounts and times (`amount>=4000`, `created>1767225600`, in Unix seconds), ' +
  '`metadata["order_id"]:"1042"`, and free text (a word or a quoted string of at least 3 characters) found anywhere in the names and emails. ' +
  'Always within the key\'s account and mode; pages like a list, newest first. A malformed query answers 400 `parameter_invalid` on `query`, its message naming the position (0-based) of the error.';

/** A page of search results: the list envelope of `listOf`, under an id of its own. */
function searchResultOf(item: z.ZodType) {
  const id = schemaId(item);
  return z
    .strictObject({
      object: objectName('list'),
      url: z.string().meta({ description: 'The path searched.', example: '/v1/search/payments' }),
      has_more: z.boolean().meta({ description: 'True when more results follow the last one: call again with the same `query` and `starting_after` set to its id.' }),
      data: z.array(item).meta({ description: 'The results of this page, newest first.' }),
    })
    .meta({ id: `${id}_search_result`, description: `A page of \`${id}\` objects found by a search, newest first.` });
}

const op = (resource: Resource, operationId: string, noun: string, response: Operation['response']): Operation => ({
  method: 'get',
  path: `/v1/search/${resource}`,
  operationId,
  tag: 'Search',
  summary: `Search ${noun}`,
  description: `${LANGUAGE} Fields: ${Object.keys(FIELDS[resource]).map((f) => `\`${f}\``).join(', ')}.`,
  query: searchQuerySchema(resource),
  response,
});

/** `GET /v1/search/…` (issue 27; docs/search.md). */
export const SEARCH_OPERATIONS: readonly Operation[] = [
  op('customers', 'searchCustomers', 'customers', searchResultOf(CustomerObject)),
  op('payments', 'searchPayments', 'payments', searchResultOf(PaymentObject)),
  op('invoices', 'searchInvoices', 'invoices', searchResultOf(InvoiceObject)),
  op('checkout-sessions', 'searchCheckoutSessions', 'checkout sessions', searchResultOf(CheckoutSessionObject)),
];
