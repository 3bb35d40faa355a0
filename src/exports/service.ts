import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Sql } from '../db/sql.ts';
import { invalidParam } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { validate } from '../lib/validate.ts';
import { cells, header, type Dataset } from './columns.ts';
import { csvLine } from './csv.ts';
import { CreateExportRun, ExportQuery } from './schema.ts';
import { eachBatch } from './source.ts';

const STATUSES: Record<Dataset, readonly string[] | null> = {
  payments: ['PENDING', 'SUCCEEDED', 'FAILED'],
  refunds: ['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED'],
  disputes: ['NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST'],
  customers: null,
  invoices: ['DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE'],
  'installment-parts': ['SCHEDULED', 'PAID', 'RETRYING', 'FAILED', 'CANCELLED'],
};
const BY_CUSTOMER: ReadonlySet<Dataset> = new Set(['payments', 'invoices', 'installment-parts']);

/** Validates an export's query for its dataset: a filter the dataset does not have is a 400 naming it. */
export function exportQuery(d: Dataset, input: unknown): ExportQuery {
  return checkFilters(d, validate(ExportQuery, input, 'query'));
}

/** The body of an export run, checked like an export's query. */
export function exportRunInput(d: Dataset, input: unknown): ExportQuery {
  return checkFilters(d, validate(CreateExportRun, input));
}

function checkFilters(d: Dataset, q: ExportQuery): ExportQuery {
  const statuses = STATUSES[d];
  if (q.status !== undefined && (!statuses || !statuses.includes(q.status.toUpperCase()))) {
    throw invalidParam('status', statuses ? `status must be one of ${statuses.join(', ')}` : `${d} have no status to filter on`);
  }
  if (q.customer !== undefined && !BY_CUSTOMER.has(d)) throw invalidParam('customer', `${d} cannot be filtered by customer`);
  if (q.created_gte !== undefined && q.created_lt !== undefined && q.created_lt <= q.created_gte) {
    throw invalidParam('created_lt', 'created_lt must be after created_gte');
  }
  return q;
}

/**
 * Writes the CSV of an export to `out`: the header, then each keyset page as it comes (source.ts),
 * waiting for `out` to drain before the next one (constant memory, however many rows). Answers the
 * number of rows written.
 */
export async function writeExport(sql: Sql, o: Owner, d: Dataset, q: ExportQuery, out: Writable): Promise<number> {
  let rows = 0;
  const write = async (chunk: string) => {
    if (out.destroyed) throw new Error('the reader went away');
    if (!out.write(chunk)) await once(out, 'drain');
  };
  await write(csvLine(header(d)));
  await eachBatch(sql, o, d, q, async (batch) => {
    let chunk = '';
    for (const row of batch) chunk += csvLine(cells(d, row));
    rows += batch.length;
    await write(chunk);
  });
  return rows;
}
