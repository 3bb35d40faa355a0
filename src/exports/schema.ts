import { z } from 'zod';
import { queryInt } from '../lib/pagination.ts';
import { MAX_UNIX_SECONDS, text, unixSeconds } from '../lib/validate.ts';

const unixQuery = (what: string) =>
  queryInt(0, MAX_UNIX_SECONDS, `${what} must be a Unix timestamp in seconds`).optional().meta({ description: `${what[0]!.toUpperCase()}${what.slice(1)} (Unix seconds, UTC).` });

const status = () => text(40).regex(/^[A-Za-z_]+$/, 'must be a status of the exported objects').optional().meta({ description: 'Only the objects with this status (any case).' });
const customer = () =>
  text(100).regex(/^cus_[a-z0-9]+$/, 'must be the id of a cus_ object').optional().meta({ description: 'Only the objects of this customer (payments, invoices, installment parts).' });

/** The query of an export: the date range of `created` and the list's filters. */
export const ExportQuery = z.strictObject({
  created_gte: unixQuery('the start of the range, included'),
  created_lt: unixQuery('the end of the range, excluded'),
  status: status(),
  customer: customer(),
});
export type ExportQuery = z.infer<typeof ExportQuery>;

/** POST /v1/exports/{dataset}/runs: the same range and filters, in a body. */
export const CreateExportRun = z.strictObject({
  created_gte: unixSeconds().optional().meta({ description: 'The start of the range, included (Unix seconds, UTC).' }),
  created_lt: unixSeconds().optional().meta({ description: 'The end of the range, excluded (Unix seconds, UTC).' }),
  status: status(),
  customer: customer(),
});
export type CreateExportRun = z.infer<typeof CreateExportRun>;
