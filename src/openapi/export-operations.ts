import { z } from 'zod';
import { DATASETS } from '../exports/columns.ts';
import { ExportRunObject } from '../exports/presenter.ts';
import { CreateExportRun, ExportQuery } from '../exports/schema.ts';
import type { Operation } from './operation.ts';

const CsvFile = z.string().meta({
  id: 'csv_export',
  description:
    'A CSV file (RFC 4180, UTF-8, CRLF) whose first line names the columns (docs/exports.md). Times are UTC, ISO 8601; every amount is given in the smallest currency unit (`…_cents`) and as a decimal. A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with `\'`.',
});

const pascal = (d: string) => d.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
const words = (d: string) => d.replace('-', ' ');

/**
 * `GET /v1/exports/{dataset}` (issue 27; docs/exports.md), one operation per dataset, and the
 * export runs of each: `POST /v1/exports/{dataset}/runs`, `GET /v1/exports/{dataset}/runs/{id}`.
 */
export const EXPORT_OPERATIONS: readonly Operation[] = DATASETS.flatMap((d): Operation[] => [
  {
    method: 'get',
    path: `/v1/exports/${d}`,
    operationId: `export${pascal(d)}`,
    tag: 'Exports',
    summary: `Export ${words(d)} as CSV`,
    description: `The ${words(d)} of the key's account and mode created in the range, oldest first, streamed as they are read, in constant memory. A range of more than EXPORT_STREAM_MAX_ROWS rows (100,000 by default) is refused (400 \`resource_limit_reached\`): make an export run instead.`,
    query: ExportQuery,
    response: CsvFile,
    csv: true,
  },
  {
    method: 'post',
    path: `/v1/exports/${d}/runs`,
    operationId: `create${pascal(d)}ExportRun`,
    tag: 'Exports',
    summary: `Start an export run of ${words(d)}`,
    description: `A job writes the CSV of the ${words(d)} in the range, of any size; retrieve the run until it is \`SUCCEEDED\`, then download its file from \`url\` (no key needed, valid EXPORT_LINK_TTL_SECONDS). Needs read access to the ${words(d)} only.`,
    body: CreateExportRun,
    response: ExportRunObject,
  },
  {
    method: 'get',
    path: `/v1/exports/${d}/runs/{id}`,
    operationId: `retrieve${pascal(d)}ExportRun`,
    tag: 'Exports',
    summary: `Retrieve an export run of ${words(d)}`,
    description: 'Its status, and once `SUCCEEDED` a new download link of its file.',
    id: ['exr', 'export run'],
    response: ExportRunObject,
  },
]);
