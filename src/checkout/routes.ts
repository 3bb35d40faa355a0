import { Router } from 'express';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentSession } from './presenter.ts';
import { CreateSession, ExpireSession, ListSessions } from './schema.ts';
import { createSession, expireSessionNow, listSessions, retrieveSession } from './service.ts';
import type { SessionRow } from './store.ts';

export function checkoutSessionsRouter(s: Services): Router {
  const r = Router();
  const present = (row: SessionRow) => presentSession(row, s.config.checkoutUrl);
  const sessionId = (id: string) => pathId('cs', 'checkout_session', id);

  r.post('/', async (req, res) => {
    const input = validate(CreateSession, req.body);
    res.json(present(await createSession(s, req.auth, input)));
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListSessions, req.query);
    res.json(toList(await listSessions(s, req.auth, q, req.log), q, '/v1/checkout/sessions', present));
  });

  r.get('/:id', async (req, res) => {
    res.json(present(await retrieveSession(s, req.auth, sessionId(req.params.id), req.log)));
  });

  r.post('/:id/expire', async (req, res) => {
    validate(ExpireSession, req.body);
    res.json(present(await expireSessionNow(s, req.auth, sessionId(req.params.id), req.log)));
  });

  return r;
}
