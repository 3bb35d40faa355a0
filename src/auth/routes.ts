import { permissionsOf } from './scopes.ts';
import { Router, type Request, type RequestHandler } from 'express';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import { parseListQuery, toList } from '../lib/pagination.ts';
import { chargesEnabled } from '../processor/select.ts';
import { pathId, validate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import type { Owner } from '../lib/owner.ts';
import { getBranding } from './keys.ts';
import { apiActor, callingKeyId } from './middleware.ts';
import { presentApiKey, presentNewApiKey, type Account } from './presenter.ts';
import { CreateApiKey, ListApiKeys, RevokeApiKey, RollApiKey, UpdateAccount } from './schema.ts';
import { assertLiveSettings, createKey, revokeKey, rollKey, updateAccount, type KeyCaller } from './service.ts';
import * as store from './store.ts';

export function accountRouter(s: Services): Router {
  const r = Router();
  // charges_enabled: whether this mode takes payments (live needs Stripe keys; issue 12).
  // The branding, shared by both modes: business_name is the sender name of emails and the heading
  // of the hosted pages, support_email the Reply-To of emails, brand_color and logo_url the look of
  // the hosted checkout, payment link and invoice pages (issue 14).
  const present = async (o: Owner): Promise<Account> => {
    const b = await getBranding(s.sql, o.accountId);
    return {
      id: o.accountId,
      object: 'account',
      livemode: o.livemode,
      charges_enabled: chargesEnabled(s, o.livemode),
      business_name: b.business_name,
      support_email: b.support_email,
      brand_color: b.brand_color,
      logo_url: b.logo_url,
    };
  };

  r.get('/', async (req, res) => {
    res.json(await present(req.auth));
  });

  // Live keys only (issue 21): a test key is refused before its body is read.
  const update: RequestHandler = async (req, res) => {
    assertLiveSettings(req.auth);
    const input = validate(UpdateAccount, req.body);
    await updateAccount(s.sql, req.auth, input, req.log, apiActor(req));
    res.json(await present(req.auth));
  };
  r.post('/', update);
  r.patch('/', update);
  return r;
}

/**
 * /v1/api-keys: the keys of the calling key's account and mode. A secret is answered once, by the
 * create or roll that made it. Mounted before the idempotency layer (src/app.ts), which would store
 * that answer, secret included, in clear: an Idempotency-Key is refused here instead.
 */
export function apiKeysRouter(s: Services): Router {
  const { sql } = s;
  const r = Router();
  const keyId = (id: string) => pathId('key', 'api_key', id);
  const caller = (req: Request): KeyCaller => ({ log: req.log, keyId: callingKeyId(req), actor: apiActor(req) });

  r.use((req, _res, next) => {
    if (req.method === 'POST' && req.get('Idempotency-Key') !== undefined) {
      throw new ApiError(
        'idempotency_key_invalid',
        'Idempotency-Key is not accepted on /v1/api-keys: the answer holds a secret key, which is never stored. Retry without it and revoke any extra key.',
      );
    }
    next();
  });

  r.get('/', async (req, res) => {
    const q = parseListQuery(ListApiKeys, req.query);
    res.json(toList(await store.listApiKeys(sql, req.auth, q), q, '/v1/api-keys', presentApiKey));
  });

  r.post('/', async (req, res) => {
    const input = validate(CreateApiKey, req.body ?? {});
    const { row, secret } = await createKey(sql, req.auth, caller(req), permissionsOf(input.permissions));
    res.json(presentNewApiKey(row, secret));
  });

  r.get('/:id', async (req, res) => {
    const row = await store.findApiKey(sql, req.auth, keyId(req.params.id));
    if (!row) throw resourceMissing('api_key', req.params.id);
    res.json(presentApiKey(row));
  });

  r.post('/:id/roll', async (req, res) => {
    const id = keyId(req.params.id);
    const { expires_in } = validate(RollApiKey, req.body);
    const { row, secret } = await rollKey(sql, req.auth, id, expires_in, caller(req));
    res.json(presentNewApiKey(row, secret));
  });

  r.post('/:id/revoke', async (req, res) => {
    const id = keyId(req.params.id);
    validate(RevokeApiKey, req.body);
    res.json(presentApiKey(await revokeKey(sql, req.auth, id, caller(req))));
  });

  return r;
}
