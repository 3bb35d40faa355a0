import { Router } from 'express';
import { ApiError } from '../lib/errors.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentPortalSession } from './presenter.ts';
import { CreatePortalSession } from './schema.ts';
import { createMerchantPortalLink } from './service.ts';

/**
 * POST /v1/customers/:id/portal-sessions: a one-time portal sign-in link for a customer of the
 * key's account and mode. Mounted before the idempotency layer (src/app.ts): the answer holds a
 * live sign-in link, which that layer would keep in clear for 24 hours, so an Idempotency-Key is
 * refused here, as on /v1/api-keys. A blind retry makes a second link; an unused one expires.
 */
export function portalSessionsRouter(s: Services): Router {
  const r = Router();
  r.post('/:id/portal-sessions', async (req, res) => {
    if (req.get('Idempotency-Key') !== undefined) {
      throw new ApiError(
        'idempotency_key_invalid',
        'Idempotency-Key is not accepted on portal sessions: the answer holds a one-time sign-in link, which is never stored. Retry without it; an unused link expires by itself.',
      );
    }
    const customerId = pathId('cus', 'customer', req.params.id);
    const input = validate(CreatePortalSession, req.body);
    res.json(presentPortalSession(await createMerchantPortalLink(s, req.auth, customerId, input.return_url ?? null)));
  });
  return r;
}
