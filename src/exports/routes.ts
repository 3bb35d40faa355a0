import { Router, type Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { nowUnix } from '../lib/time.ts';
import { pathId } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { DATASETS, type Dataset } from './columns.ts';
import { linkValid } from './link.ts';
import { presentExportRun } from './presenter.ts';
import { createExportRun, sendStoredExport } from './run.ts';
import type { ExportQuery } from './schema.ts';
import { exportQuery, exportRunInput, writeExport } from './service.ts';
import { countUpTo } from './source.ts';
import { findRun, runById, type ExportRunRow } from './store.ts';

export const isDataset = (v: string): v is Dataset => (DATASETS as readonly string[]).includes(v);

/** The file name of an export: the dataset, the mode and the range (UTC dates). */
export function exportFileName(d: Dataset, livemode: boolean, q: ExportQuery): string {
  const day = (s: number | undefined) => (s === undefined ? 'all' : new Date(s * 1000).toISOString().slice(0, 10));
  return `${d}-${livemode ? 'live' : 'test'}-${day(q.created_gte)}-to-${day(q.created_lt)}.csv`;
}

/**
 * Streams an export as the HTTP answer (the API's GET). Once the first bytes are sent, an error can
 * no longer become an error body: the connection is cut, so a client never takes a truncated file
 * for a whole one (no final chunk of the chunked encoding).
 */
export async function sendExport(s: Services, log: Logger, res: Response, o: Owner, d: Dataset, q: ExportQuery): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${exportFileName(d, o.livemode, q)}"`);
  res.setHeader('Cache-Control', 'no-store');
  try {
    const rows = await writeExport(s.sql, o, d, q, res);
    s.metrics.exportRows.inc({ dataset: d, source: 'stream' }, rows);
    res.end();
  } catch (err) {
    if (!res.headersSent) throw err;
    log.warn({ err, dataset: d }, 'export cut short');
    res.destroy();
  }
}

/** The export run object as answered, with a fresh signed link when its file is ready. */
export const presentRun = (s: Services, row: ExportRunRow) =>
  presentExportRun(row, { baseUrl: s.config.publicBaseUrl, ttlSeconds: s.config.exports.linkTtlSeconds, nowSeconds: nowUnix() });

/**
 * `/v1/exports/{dataset}` (docs/exports.md): GET streams the CSV of a range of at most
 * EXPORT_STREAM_MAX_ROWS rows; POST `…/runs` makes an export run (a job) of any size, and GET
 * `…/runs/{id}` answers it, with its download link once its file is written.
 */
export function exportsRouter(s: Services): Router {
  const r = Router();
  // Routes per dataset (as the OpenAPI document lists them); anything else under /v1/exports is a 404.
  for (const d of DATASETS) {
    r.get(`/${d}`, async (req, res) => {
      const q = exportQuery(d, req.query);
      const max = s.config.exports.streamMaxRows;
      if ((await countUpTo(s.sql, req.auth, d, q, max + 1)) > max) {
        throw new ApiError(
          'resource_limit_reached',
          `This export holds more than ${max} rows, more than one answer streams: run it as a job (POST /v1/exports/${d}/runs) or narrow the range.`,
          q.created_gte === undefined ? 'created_gte' : 'created_lt',
        );
      }
      await sendExport(s, req.log, res, req.auth, d, q);
    });
    r.post(`/${d}/runs`, async (req, res) => {
      const q = exportRunInput(d, req.body);
      res.json(presentRun(s, await createExportRun(s, req.log, req.auth, d, q)));
    });
    r.get(`/${d}/runs/:id`, async (req, res) => {
      const row = await findRun(s.sql, req.auth, pathId('exr', 'export run', req.params.id));
      if (!row || row.dataset !== d) throw resourceMissing('export run', req.params.id);
      res.json(presentRun(s, row));
    });
  }
  return r;
}

/**
 * `GET /files/export-runs/{id}?expires=…&signature=…`: the file of a SUCCEEDED run, for whoever
 * holds a link the service signed that has not expired (docs/exports.md). Anything else, a
 * tampered or expired link included, is the same 404, which tells nothing about the run.
 */
export function exportFilesRouter(s: Services): Router {
  const r = Router();
  r.get('/:id', async (req, res) => {
    const expires = Number(typeof req.query.expires === 'string' && /^\d{1,12}$/.test(req.query.expires) ? req.query.expires : NaN);
    const sig = typeof req.query.signature === 'string' ? req.query.signature : '';
    const row = /^exr_[a-z0-9]{1,60}$/.test(req.params.id) ? await runById(s.sql, req.params.id) : null;
    if (!row || row.status !== 'SUCCEEDED' || !linkValid(row, expires, sig, nowUnix())) {
      throw new ApiError('resource_missing', 'This download link is invalid or has expired: retrieve the export run again for a new one.', 'signature');
    }
    await sendStoredExport(s, req.log, res, row, exportFileName(row.dataset, row.livemode, row.filters));
  });
  return r;
}
