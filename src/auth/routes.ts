import { Router } from 'express';
import { z } from 'zod';
import { chargesEnabled } from '../processor/select.ts';
import { validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import type { Owner } from '../lib/owner.ts';
import { businessNameProblem, getBusinessName, setBusinessName } from './keys.ts';

/** POST /v1/account: what the merchant may set on its account (for now, the name payers see). */
const UpdateAccount = z.strictObject({
  business_name: z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      const problem = businessNameProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .nullable()
    .optional(),
});

export function accountRouter(s: Services): Router {
  const r = Router();
  // charges_enabled: whether this mode takes payments (live needs Stripe keys; issue 12).
  // business_name: the sender name of emails and the heading of invoices (issue 13), shared by both modes.
  const present = async (o: Owner) => ({
    id: o.accountId,
    object: 'account' as const,
    livemode: o.livemode,
    charges_enabled: chargesEnabled(s, o.livemode),
    business_name: await getBusinessName(s.sql, o.accountId),
  });

  r.get('/', async (req, res) => {
    res.json(await present(req.auth));
  });

  r.post('/', async (req, res) => {
    const input = validate(UpdateAccount, req.body);
    if (input.business_name !== undefined) await setBusinessName(s.sql, req.auth.accountId, input.business_name);
    res.json(await present(req.auth));
  });
  return r;
}
