import { Router } from 'express';
import { validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentReport } from './presenter.ts';
import { ReportQuery } from './schema.ts';
import { buildReport, reportRange } from './service.ts';

/** `GET /v1/reports/summary` (docs/reports.md): read from the rollups, never from the payments. */
export function reportsRouter(s: Services): Router {
  const r = Router();
  r.get('/summary', async (req, res) => {
    const range = reportRange(validate(ReportQuery, req.query, 'query'));
    const end = s.metrics.reportDuration.startTimer({ surface: 'api', interval: range.interval });
    const report = await buildReport(s.sql, req.auth, range);
    end();
    res.json(presentReport(report));
  });
  return r;
}
