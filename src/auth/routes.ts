import { Router } from 'express';

export function accountRouter(): Router {
  const r = Router();
  r.get('/', (req, res) => {
    res.json({ id: req.auth.accountId, object: 'account', livemode: req.auth.livemode });
  });
  return r;
}
