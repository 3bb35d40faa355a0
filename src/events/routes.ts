import { Router } from 'express';
import { resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentEventTypes, type PayloadSchemaOf } from './catalogue.ts';
import { presentEvent } from './presenter.ts';
import { flattenCreated, ListEvents } from './schema.ts';
import { findEvent, listEvents } from './store.ts';

const eventId = (id: string) => pathId('evt', 'event', id);

export function eventsRouter(s: Services): Router {
  const r = Router();

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListEvents, flattenCreated(req.query as Record<string, unknown>));
    const rows = await listEvents(s.sql, req.auth, q, { type: q.type, createdGte: q['created[gte]'], createdLte: q['created[lte]'] });
    res.json(toList(rows, q, '/v1/events', presentEvent));
  });

  r.get('/:id', async (req, res) => {
    const row = await findEvent(s.sql, req.auth, eventId(req.params.id));
    if (!row) throw resourceMissing('event', req.params.id);
    res.json(presentEvent(row));
  });

  return r;
}

/**
 * `GET /v1/event-types`: every type, with its payload's JSON Schema. events/ knows no business
 * component, so the schemas are handed in (src/openapi/events.ts makes them, src/app.ts passes them).
 */
export function eventTypesRouter(schemaOf: PayloadSchemaOf): Router {
  let body: string | undefined;
  return Router().get('/', (_req, res) => {
    body ??= JSON.stringify(presentEventTypes(schemaOf));
    res.type('application/json').send(body);
  });
}
