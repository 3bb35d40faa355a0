import { Router, type RequestHandler } from 'express';
import { presentSession } from '../checkout/presenter.ts';
import { presentDispute } from '../disputes/presenter.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { presentTestPayment, presentTimeAdvance } from './presenter.ts';
import { AdvanceTime, DisputePayment, ExpireSessionNow, PaySession } from './schema.ts';
import { advanceTime, disputePayment, expireCheckoutSession, payCheckoutSession, testModeOnly } from './service.ts';

/** A live key is refused before anything else, whatever the path or body: 403 permission_error. */
const refuseLiveKeys: RequestHandler = (req, _res, next) => {
  testModeOnly(req.auth);
  next();
};

/**
 * `/v1/test-helpers` (test keys only): pay a checkout session with a test card or a scenario,
 * expire a session now, run the time-based work due within some seconds, dispute a payment.
 * Mounted by src/app.ts after the key check and the idempotency layer.
 */
export function testHelpersRouter(s: Services): Router {
  const r = Router();
  const sessionId = (id: string) => pathId('cs', 'checkout_session', id);
  r.use(refuseLiveKeys);

  r.post('/checkout/sessions/:id/pay', async (req, res) => {
    const id = sessionId(req.params.id);
    const input = validate(PaySession, req.body);
    res.json(presentTestPayment(await payCheckoutSession(s, req.auth, id, input, req.log), s.config.checkoutUrl));
  });

  r.post('/checkout/sessions/:id/expire', async (req, res) => {
    const id = sessionId(req.params.id);
    validate(ExpireSessionNow, req.body);
    res.json(presentSession(await expireCheckoutSession(s, req.auth, id, req.log), s.config.checkoutUrl));
  });

  r.post('/advance-time', async (req, res) => {
    const input = validate(AdvanceTime, req.body);
    res.json(presentTimeAdvance(await advanceTime(s, req.auth, input, req.log)));
  });

  r.post('/payments/:id/dispute', async (req, res) => {
    const id = pathId('pay', 'payment', req.params.id);
    const input = validate(DisputePayment, req.body);
    res.json(presentDispute(await disputePayment(s, req.auth, id, input, req.log)));
  });

  return r;
}
