import { Router } from 'express';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentDelivery } from '../webhooks/presenter.ts';
import { SendTestEvent } from './schema.ts';
import { sendTestEvent } from './service.ts';

/**
 * `POST /v1/webhook-endpoints/:id/test {type}`: sends a sample event of `type` to that endpoint only,
 * signed and logged like any delivery, and answers the `webhook_delivery` (its `event_id` can be read
 * with GET /v1/events/:id; the event is not in the GET /v1/events lists). Mounted by src/app.ts at
 * /v1/webhook-endpoints beside the endpoints router: the samples are made with the presenters of
 * checkout, payments, refunds, disputes and invoices, which the webhooks component may not import.
 */
export function testEventsRouter(s: Services): Router {
  const r = Router();
  r.post('/:id/test', async (req, res) => {
    const id = pathId('we', 'webhook_endpoint', req.params.id);
    const input = validate(SendTestEvent, req.body);
    const { delivery } = await sendTestEvent(s, req.auth, id, input);
    res.json(presentDelivery(delivery));
  });
  return r;
}
