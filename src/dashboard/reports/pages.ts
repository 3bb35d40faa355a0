import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../lib/errors.ts';
import { validate } from '../../lib/validate.ts';
import { formText } from '../../pages/index.ts';
import { isReportTable, reportCsv, reportFileName } from '../../reports/csv.ts';
import { ReportQuery } from '../../reports/schema.ts';
import { buildReport, reportRange, type ReportRange } from '../../reports/service.ts';
import { reportCurrencies } from '../../reports/store.ts';
import { can, type Permission } from '../../team/roles.ts';
import { allow, type DashContext } from '../context.ts';
import { reportsPage, type ReportForm } from './views.ts';

/** Reading the page is reading payments (`read`: every role, analysts included); its CSV files are downloads (`export`: not support). */
export const REPORTS_PERMISSION: Permission = 'read';
export const REPORT_DOWNLOAD_PERMISSION: Permission = 'export';

/** The form's fields as typed (cut short), and as the API's query: an empty field is left out. */
function formOf(req: Request): { typed: Omit<ReportForm, 'currencies' | 'error'>; query: Record<string, string> } {
  const typed = {
    interval: formText(req.query.interval).slice(0, 10) || 'day',
    from: formText(req.query.from).slice(0, 10),
    to: formText(req.query.to).slice(0, 10),
    currency: formText(req.query.currency).slice(0, 10),
  };
  return { typed, query: Object.fromEntries(Object.entries(typed).filter(([, v]) => v !== '')) };
}

/**
 * /dashboard/reports: the reports of the session's account and mode (issue 27, point 3), read from
 * the rollups by the same service as `GET /v1/reports/summary`; `/download?table=…` gives each
 * table as CSV. A bad field shows the API's message beside it, with a 400.
 */
export function reportsPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;

  const rangeOf = (req: Request): { typed: ReturnType<typeof formOf>['typed']; range: ReportRange | ApiError } => {
    const { typed, query } = formOf(req);
    try {
      return { typed, range: reportRange(validate(ReportQuery, query, 'query')) };
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return { typed, range: err };
      throw err;
    }
  };

  r.get('/', allow(REPORTS_PERMISSION), async (req, res) => {
    const { typed, range } = rangeOf(req);
    const o = ctx.owner(res);
    const currencies = await reportCurrencies(s.sql, o);
    const canDownload = can(ctx.session(res).role, REPORT_DOWNLOAD_PERMISSION);
    if (range instanceof ApiError) {
      const form = { ...typed, currencies, error: { message: range.message, param: range.param } };
      return ctx.render(req, res, () => reportsPage({ form, report: null, canDownload }), 400);
    }
    const end = s.metrics.reportDuration.startTimer({ surface: 'dashboard', interval: range.interval });
    const report = await buildReport(s.sql, o, range);
    end();
    const form = { interval: range.interval, from: range.from, to: range.to, currency: range.currency ?? '', currencies, error: null };
    await ctx.render(req, res, () => reportsPage({ form, report, canDownload }));
  });

  r.get('/download', allow(REPORT_DOWNLOAD_PERMISSION), async (req, res: Response) => {
    const { range } = rangeOf(req);
    const table = formText(req.query.table);
    if (range instanceof ApiError) return badRequest(res, range.message);
    if (!isReportTable(table)) return badRequest(res, 'Invalid table: choose volume, counts or declines.');
    if (!range.currency) return badRequest(res, 'Missing currency: each table is of one currency.');
    const end = s.metrics.reportDuration.startTimer({ surface: 'csv', interval: range.interval });
    const report = await buildReport(s.sql, ctx.owner(res), range);
    end();
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="${reportFileName(table, range.currency, report)}"`);
    res.setHeader('Cache-Control', 'no-store');
    res.send(reportCsv(report, table, range.currency));
  });
  return r;
}

/** A download link edited by hand: a plain 400 (the page's links are always whole). */
const badRequest = (res: Response, message: string) => res.status(400).type('text/plain').send(message);
