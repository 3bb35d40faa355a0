import { Router } from 'express';
import { flattenCreated } from '../events/schema.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import type { Services } from '../services.ts';
import { presentAuditEvent } from './presenter.ts';
import { ListAuditEvents } from './schema.ts';
import { listAuditEvents } from './store.ts';

/**
 * GET /v1/audit-events: the account's audit log, the key's mode and what is account-wide. Read
 * only: no route of the service changes or deletes an audit event (the table refuses it too).
 */
export function auditEventsRouter(s: Services): Router {
  const r = Router();
  r.get('/', async (req, res) => {
    const q = parseListQuery(ListAuditEvents, flattenCreated(req.query as Record<string, unknown>));
    const rows = await listAuditEvents(s.sql, req.auth.accountId, req.auth.livemode, q, {
      actor: q.actor,
      action: q.action,
      createdGte: q['created[gte]'],
      createdLte: q['created[lte]'],
    });
    res.json(toList(rows, q, '/v1/audit-events', presentAuditEvent));
  });
  return r;
}
