import { Router } from 'express';
import { resourceMissing } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentDelivery } from '../webhooks/presenter.ts';
import { presentEventTypes } from './catalogue.ts';
import { presentEvent } from './presenter.ts';
import { flattenCreated, ListDeliveries, ListEvents, ResendEvent } from './schema.ts';
import { eventDeliveries, resendEvent } from './service.ts';
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

  r.get('/:id/deliveries', async (req, res) => {
    const id = eventId(req.params.id);
    const q = parseListQuery(ListDeliveries, req.query);
    const page = await eventDeliveries(s, req.auth, id, q);
    res.json(toList(page.rows, q, `/v1/events/${id}/deliveries`, (d) => presentDelivery(d, page.attempts.get(d.id))));
  });

  r.post('/:id/resend', async (req, res) => {
    const id = eventId(req.params.id);
    const { endpoint_id } = validate(ResendEvent, req.body);
    if (endpoint_id !== undefined && !isId('we', endpoint_id)) throw resourceMissing('webhook_endpoint', endpoint_id, 'endpoint_id');
    const rows = await resendEvent(s, req.auth, id, endpoint_id);
    res.json({ object: 'list', url: `/v1/events/${id}/resend`, has_more: false, data: rows.map((d) => presentDelivery(d)) });
  });

  return r;
}

export function eventTypesRouter(): Router {
  return Router().get('/', (_req, res) => {
    res.json(presentEventTypes());
  });
}
