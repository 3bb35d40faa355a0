import { Router, type Request, type Response } from 'express';
import { DATASETS, type Dataset } from '../../exports/columns.ts';
import { exportFileName, isDataset } from '../../exports/routes.ts';
import { createExportRun, sendStoredExport } from '../../exports/run.ts';
import { exportRunInput } from '../../exports/service.ts';
import { findRun, recentRuns } from '../../exports/store.ts';
import { ApiError } from '../../lib/errors.ts';
import { isId } from '../../lib/ids.ts';
import { formText } from '../../pages/index.ts';
import type { Permission } from '../../team/roles.ts';
import { allow, doneNotice, FormRefused, type DashContext } from '../context.ts';
import { fieldsOf } from '../forms.ts';
import { EXPORTS_PATH, exportsPage, type ExportForm } from './views.ts';

/** What this section asks of the user's role (src/team/roles.ts): `export` (analysts yes, support no). */
export const EXPORT_PERMISSION: Permission = 'export';

/** How many of the mode's newest export runs the page lists. */
const LISTED_RUNS = 20;

const DONE = { started: 'The export has started. Its file appears below once written: reload the page to see it.' };

const DAY = /^\d{4}-\d\d-\d\d$/;
/** A UTC day of the form as Unix seconds at its start; `next` the start of the day after. */
const dayStart = (v: string, next = false): number | string | undefined => {
  if (!v) return undefined;
  const ms = DAY.test(v) ? Date.parse(`${v}T00:00:00Z`) : NaN;
  return Number.isNaN(ms) ? v : ms / 1000 + (next ? 86_400 : 0);
};

/**
 * /dashboard/exports: the export form, which always starts an export run (a job: the dashboard has
 * no range small enough to promise a quick answer, and a browser download of a long stream cannot
 * resume), and the list of the mode's newest runs, each file downloaded through
 * `/runs/{id}/file`. Only roles with `export` (src/team/roles.ts) may see or use any of it: support
 * is refused with a 403.
 */
export function exportsPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;

  const formOf = (values: Record<string, string>): ExportForm => {
    const dataset = values.dataset ?? '';
    return {
      dataset: isDataset(dataset) ? dataset : 'payments',
      from: (values.from ?? '').slice(0, 10),
      to: (values.to ?? '').slice(0, 10),
      status: (values.status ?? '').slice(0, 40),
      error: null,
    };
  };
  const show = async (req: Request, res: Response, f: ExportForm, status = 200) => {
    const runs = await recentRuns(s.sql, ctx.owner(res), LISTED_RUNS);
    await ctx.render(req, res, (forms) => exportsPage(f, runs, doneNotice(req, DONE), forms), status);
  };

  r.get('/', allow(EXPORT_PERMISSION), async (req, res) => {
    await show(req, res, formOf({}));
  });

  r.post(
    '/',
    allow(EXPORT_PERMISSION),
    ctx.action(
      async (req, res) => {
        const v = fieldsOf(req);
        if (!(DATASETS as readonly string[]).includes(v.dataset ?? '')) throw new ApiError('parameter_invalid', 'Choose what to export.', 'dataset');
        const d = v.dataset as Dataset;
        const input = { created_gte: dayStart(formText(v.from)), created_lt: dayStart(formText(v.to), true), status: formText(v.status) || undefined };
        const q = exportRunInput(d, Object.fromEntries(Object.entries(input).filter(([, x]) => x !== undefined)));
        const run = await createExportRun(s, req.log, ctx.owner(res), d, q);
        req.log.info({ component: 'dashboard', exportRun: run.id, dataset: d }, 'dashboard export run started');
        return { redirect: `${EXPORTS_PATH}?done=started` };
      },
      async (req, res, err) => show(req, res, { ...formOf(fieldsOf(req)), error: { message: err.message, param: err.param } }, err.status),
    ),
  );

  r.get('/runs/:id/file', allow(EXPORT_PERMISSION), async (req, res) => {
    const run = isId('exr', req.params.id) ? await findRun(s.sql, ctx.owner(res), req.params.id) : null;
    if (!run || run.status !== 'SUCCEEDED') throw new FormRefused(404, 'No such file', 'This export has no file (it is not written yet, it failed, or it has expired).');
    await sendStoredExport(s, req.log, res, run, exportFileName(run.dataset, run.livemode, run.filters));
  });
  return r;
}
