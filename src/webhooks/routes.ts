import { Router } from 'express';
import { apiActor } from '../auth/middleware.ts';
import { resourceMissing } from '../lib/errors.ts';
import { isId } from '../lib/ids.ts';
import { deleted } from '../lib/objects.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentDelivery, presentEndpoint, presentEndpointWithSecret } from './presenter.ts';
import {
  CreateEndpoint,
  EndpointStatsQuery,
  ListDeliveries,
  ListEndpointDeliveries,
  ListEndpoints,
  ResendEvent,
  RetryFailed,
  RotateSecret,
  UpdateEndpoint,
} from './schema.ts';
import * as service from './service.ts';
import * as store from './store.ts';

const endpointId = (id: string) => pathId('we', 'webhook_endpoint', id);
const eventId = (id: string) => pathId('evt', 'event', id);

/**
 * /v1/webhook-endpoints: create (the answer holds `signing_secret`, shown this once), list, read,
 * update (url, description, enabled_events, is_active: false pauses the endpoint's deliveries, true
 * sends them), delete, and `/:id/rotate-secret` (the new secret shown once; the old one keeps
 * signing 24 h). An endpoint's deliveries: `GET /:id/deliveries` (newest first, `status` filter,
 * each with its attempts) and `POST /:id/retry-failed {since}` (sends again, once, each event whose
 * latest delivery to the endpoint FAILED and was created at or after `since`, Unix seconds,
 * required; answers the new deliveries, `has_more` when over RETRY_FAILED_MAX were found).
 * `POST /:id/test` is src/test-events/, mounted beside this router (it builds the sample objects,
 * which this component may not import).
 */
export function webhookEndpointsRouter(s: Services): Router {
  const r = Router();

  r.post('/', async (req, res) => {
    const input = validate(CreateEndpoint, req.body);
    res.json(presentEndpointWithSecret(await service.createEndpoint(s, req.auth, input, apiActor(req))));
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListEndpoints, req.query);
    res.json(toList(await store.listEndpoints(s.sql, req.auth, q), q, '/v1/webhook-endpoints', presentEndpoint));
  });

  r.get('/:id', async (req, res) => {
    const row = await store.findEndpoint(s.sql, req.auth, endpointId(req.params.id));
    if (!row) throw resourceMissing('webhook_endpoint', req.params.id);
    res.json(presentEndpoint(row));
  });

  r.patch('/:id', async (req, res) => {
    const patch = validate(UpdateEndpoint, req.body);
    res.json(presentEndpoint(await service.updateEndpoint(s, req.auth, endpointId(req.params.id), patch, apiActor(req))));
  });

  r.delete('/:id', async (req, res) => {
    await service.deleteEndpoint(s, req.auth, endpointId(req.params.id), apiActor(req));
    res.json(deleted('webhook_endpoint', req.params.id));
  });

  r.post('/:id/rotate-secret', async (req, res) => {
    validate(RotateSecret, req.body);
    res.json(presentEndpointWithSecret(await service.rotateSecret(s, req.auth, endpointId(req.params.id), apiActor(req))));
  });

  r.get('/:id/deliveries', async (req, res) => {
    const id = endpointId(req.params.id);
    const q = parseListQuery(ListEndpointDeliveries, req.query);
    const page = await service.endpointDeliveries(s, req.auth, id, q);
    res.json(toList(page.rows, q, `/v1/webhook-endpoints/${id}/deliveries`, (d) => presentDelivery(d, page.attempts.get(d.id))));
  });

  r.get('/:id/stats', async (req, res) => {
    validate(EndpointStatsQuery, req.query);
    res.json(await service.endpointStats(s, req.auth, endpointId(req.params.id)));
  });

  r.post('/:id/retry-failed', async (req, res) => {
    const id = endpointId(req.params.id);
    const { since } = validate(RetryFailed, req.body);
    const done = await service.retryFailed(s, req.auth, id, since);
    res.json({ object: 'list', url: `/v1/webhook-endpoints/${id}/retry-failed`, has_more: done.hasMore, data: done.rows.map((d) => presentDelivery(d)) });
  });

  return r;
}

/**
 * The deliveries of an event, and sending it again. Mounted at /v1/events beside the events router
 * (src/app.ts): the URLs are the event's, the work is this component's.
 */
export function eventDeliveriesRouter(s: Services): Router {
  const r = Router();

  r.get('/:id/deliveries', async (req, res) => {
    const id = eventId(req.params.id);
    const q = parseListQuery(ListDeliveries, req.query);
    const page = await service.eventDeliveries(s, req.auth, id, q);
    res.json(toList(page.rows, q, `/v1/events/${id}/deliveries`, (d) => presentDelivery(d, page.attempts.get(d.id))));
  });

  r.post('/:id/resend', async (req, res) => {
    const id = eventId(req.params.id);
    const { endpoint_id } = validate(ResendEvent, req.body);
    if (endpoint_id !== undefined && !isId('we', endpoint_id)) throw resourceMissing('webhook_endpoint', endpoint_id, 'endpoint_id');
    const rows = await service.resendEvent(s, req.auth, id, endpoint_id);
    res.json({ object: 'list', url: `/v1/events/${id}/resend`, has_more: false, data: rows.map((d) => presentDelivery(d)) });
  });

  return r;
}
