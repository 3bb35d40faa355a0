import { Router } from 'express';
import { resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentEndpoint, presentEndpointWithSecret } from './presenter.ts';
import { CreateEndpoint, ListEndpoints, RotateSecret, UpdateEndpoint } from './schema.ts';
import * as service from './service.ts';
import * as store from './store.ts';

const endpointId = (id: string) => pathId('we', 'webhook_endpoint', id);

export function webhookEndpointsRouter(s: Services): Router {
  const r = Router();

  r.post('/', async (req, res) => {
    const input = validate(CreateEndpoint, req.body);
    res.json(presentEndpointWithSecret(await service.createEndpoint(s, req.auth, input)));
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
    res.json(presentEndpoint(await service.updateEndpoint(s, req.auth, endpointId(req.params.id), patch)));
  });

  r.delete('/:id', async (req, res) => {
    await service.deleteEndpoint(s, req.auth, endpointId(req.params.id));
    res.json({ id: req.params.id, object: 'webhook_endpoint', deleted: true });
  });

  r.post('/:id/rotate-secret', async (req, res) => {
    validate(RotateSecret, req.body);
    res.json(presentEndpointWithSecret(await service.rotateSecret(s, req.auth, endpointId(req.params.id))));
  });

  return r;
}
