import { Router } from 'express';
import { chargesEnabled } from '../processor/select.ts';
import type { Services } from '../services.ts';

export function accountRouter(s: Services): Router {
  const r = Router();
  r.get('/', (req, res) => {
    // charges_enabled: whether this mode takes payments (live needs Stripe keys; issue 12).
    res.json({ id: req.auth.accountId, object: 'account', livemode: req.auth.livemode, charges_enabled: chargesEnabled(s, req.auth.livemode) });
  });
  return r;
}
