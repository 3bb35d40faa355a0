import { z } from 'zod';
import { created, livemode, nullableUnixTime, objectId, objectName } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { ACCESS } from './scopes.ts';
import type { ApiKeyRow } from './store.ts';

const apiKeyShape = {
  id: objectId('key', 'API key'),
  object: objectName('api_key'),
  livemode: livemode(),
  last4: z.string().meta({ description: 'The last four characters of the secret key: all that is kept of it in clear.', example: 'x9Qe' }),
  created: created(),
  last_used: nullableUnixTime('When the key last made a request (updated at most about once a minute).'),
  expires_at: nullableUnixTime('When a rolled key stops working.'),
  revoked_at: nullableUnixTime('When the key was revoked.'),
  permissions: z
    .record(z.string(), z.enum(ACCESS))
    .nullable()
    .meta({ description: 'null: a full key. A restricted key: `none`, `read` or `write` per resource; every route refuses it (403) outside them.' }),
};

/** The api_key object: never the secret (only its last four characters). */
export const ApiKeyObject = z.strictObject(apiKeyShape).meta({ id: 'api_key', description: 'A secret API key of the account and mode; the secret itself is shown once.' });
export type ApiKey = z.infer<typeof ApiKeyObject>;

/** The answer of create and roll: the one time the secret is shown. */
export const NewApiKeyObject = z
  .strictObject({
    ...apiKeyShape,
    secret: z
      .string()
      .meta({ description: 'The key (`sk_test_…` or `sk_live_…`), shown in this answer only: store it. Send it as `Authorization: Bearer <key>`.', example: 'sk_test_51Hb0…' }),
  })
  .meta({ id: 'api_key_with_secret', description: 'A new API key: the one time `secret` is shown.' });
export type NewApiKey = z.infer<typeof NewApiKeyObject>;

/** The api_key object: never the secret (only its last four characters). */
export function presentApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    object: 'api_key',
    livemode: row.livemode,
    last4: row.last4,
    created: unix(row.created_at),
    last_used: row.last_used_at ? unix(row.last_used_at) : null,
    expires_at: row.expires_at ? unix(row.expires_at) : null,
    revoked_at: row.revoked_at ? unix(row.revoked_at) : null,
    permissions: row.permissions as Record<string, (typeof ACCESS)[number]> | null,
  };
}

/** The answer of a create or a roll: the one time the secret is shown. */
export const presentNewApiKey = (row: ApiKeyRow, secret: string): NewApiKey => ({ ...presentApiKey(row), secret });

/** The account behind the calling key (GET /v1/account); branding is shared by both modes. */
export const AccountObject = z
  .strictObject({
    id: objectId('acct', 'account'),
    object: objectName('account'),
    livemode: z.boolean().meta({ description: "The calling key's mode." }),
    charges_enabled: z
      .boolean()
      .meta({ description: 'Whether this mode takes payments: test mode always; live mode only with live Stripe keys configured.' }),
    business_name: z.string().nullable().meta({ description: 'The sender name of emails and the heading of the hosted pages and invoices.' }),
    support_email: z.string().nullable().meta({ description: 'The Reply-To of every email.' }),
    brand_color: z.string().nullable().meta({ description: "`#rrggbb`: the colour of the hosted pages' main button.", example: '#1f7a4d' }),
    logo_url: z.string().nullable().meta({ description: 'An https image that heads the checkout, link and invoice pages.' }),
  })
  .meta({ id: 'account', description: 'The merchant behind the API key.' });
export type Account = z.infer<typeof AccountObject>;
