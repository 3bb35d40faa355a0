import { z } from 'zod';
import { created, livemode, nullableUnixTime, objectId, objectName, unixTime } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { DATASETS } from './columns.ts';
import { signedLink } from './link.ts';
import type { ExportRunRow } from './store.ts';

/** The export run object (issue 27, point 2; docs/exports.md "Export runs"). */
export const ExportRunObject = z
  .strictObject({
    id: objectId('exr', 'export run'),
    object: objectName('export_run'),
    livemode: livemode(),
    dataset: z.enum(DATASETS).meta({ description: 'What is exported.' }),
    filters: z
      .strictObject({
        created_gte: z.number().int().optional(),
        created_lt: z.number().int().optional(),
        status: z.string().optional(),
        customer: z.string().optional(),
      })
      .meta({ description: 'The range (Unix seconds) and filters of the export, as given.' }),
    status: z
      .enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'])
      .meta({ description: '`PENDING` until a worker starts it, `RUNNING` while the file is written, then `SUCCEEDED` (the file can be downloaded) or `FAILED`.' }),
    row_count: z.number().int().nullable().meta({ description: 'The rows of the file (header not counted), once SUCCEEDED.' }),
    size: z.number().int().nullable().meta({ description: 'The size of the file in bytes, once SUCCEEDED.' }),
    failure_message: z.string().nullable().meta({ description: 'Why a FAILED run failed.' }),
    url: z
      .string()
      .nullable()
      .meta({ description: 'Once SUCCEEDED: a link that downloads the CSV file without a key, valid until `url_expires_at` (EXPORT_LINK_TTL_SECONDS); every retrieval makes a new one.' }),
    url_expires_at: nullableUnixTime('When `url` stops working.'),
    created: created(),
    completed_at: nullableUnixTime('When the run SUCCEEDED or FAILED.'),
    expires_at: unixTime('When the run and its file are deleted (EXPORT_RETENTION_DAYS after creation).'),
  })
  .meta({ id: 'export_run', description: 'A CSV export run as a job: its file is downloaded from a link that expires.' });
export type ExportRun = z.infer<typeof ExportRunObject>;

/** The export run; `link` makes the signed download link of a SUCCEEDED run. */
export function presentExportRun(row: ExportRunRow, link: { baseUrl: string; ttlSeconds: number; nowSeconds: number }): ExportRun {
  const ready = row.status === 'SUCCEEDED';
  // A link never outlives the file it points at.
  const urlExpires = Math.min(link.nowSeconds + link.ttlSeconds, unix(row.expires_at));
  return {
    id: row.id,
    object: 'export_run',
    livemode: row.livemode,
    dataset: row.dataset,
    filters: row.filters,
    status: row.status,
    row_count: row.row_count === null ? null : Number(row.row_count),
    size: row.byte_count === null ? null : Number(row.byte_count),
    failure_message: row.failure_message,
    url: ready ? signedLink(link.baseUrl, row, urlExpires) : null,
    url_expires_at: ready ? urlExpires : null,
    created: unix(row.created_at),
    completed_at: row.completed_at ? unix(row.completed_at) : null,
    expires_at: unix(row.expires_at),
  };
}
