import { Router } from 'express';
import { resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentEmail } from './presenter.ts';
import { ListEmails } from './schema.ts';
import * as store from './store.ts';

/** GET /v1/emails and /v1/emails/:id: the emails of the key's account and mode. */
export function emailsRouter(s: Services): Router {
  const r = Router();

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListEmails, req.query);
    res.json(toList(await store.listEmails(s.sql, req.auth, q), q, '/v1/emails', presentEmail));
  });

  r.get('/:id', async (req, res) => {
    const row = await store.findEmail(s.sql, req.auth, pathId('em', 'email', req.params.id));
    if (!row) throw resourceMissing('email', req.params.id);
    res.json(presentEmail(row));
  });

  return r;
}
