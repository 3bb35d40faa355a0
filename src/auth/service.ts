import type { KeyPermissions } from './scopes.ts';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import type { Logger } from 'pino';
import type { Db, Sql } from '../db/sql.ts';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { setBranding, type AccountBranding } from './keys.ts';
import * as store from './store.ts';
import type { ApiKeyRow } from './store.ts';

/**
 * The rules of managing API keys, shared by /v1/api-keys and the dashboard's API keys page: a key
 * may not revoke itself, nor roll itself with no overlap (the caller would be locked out); a key
 * that has ended cannot be revoked or rolled; each change is logged, never with a secret. Answers
 * rows (the routes present them); a problem is an ApiError as the API answers it.
 */

/** Who asks: the log of the request, and the API key that authenticated it (none for a dashboard user). */
export interface KeyCaller {
  log: Logger;
  /** The id of the API key of the request, when it came with one. */
  keyId?: string | undefined;
  /** Who the audit log names: the key (redacted) or the dashboard user. */
  actor: AuditActor;
}

const auditKey = (sql: Db, o: Owner, by: KeyCaller, action: string, id: string, data: Record<string, unknown> = {}) =>
  recordAudit(sql, { accountId: o.accountId, livemode: o.livemode, actor: by.actor, action, object: { type: 'api_key', id }, data });

/** A new key of the owner's account and mode; the secret is answered here only. */
export async function createKey(sql: Sql, o: Owner, by: KeyCaller, permissions: KeyPermissions | null = null): Promise<{ row: ApiKeyRow; secret: string }> {
  const out = (await sql.begin(async (tx) => {
    const made = await store.createKey(tx, o, permissions);
    await auditKey(tx, o, by, 'api_key.created', made.row.id, { last4: made.row.last4, permissions });
    return made;
  })) as { row: ApiKeyRow; secret: string };
  by.log.info({ apiKeyId: out.row.id, livemode: o.livemode }, 'api key created');
  return out;
}

/**
 * Rolls the key: a new key now, and the old one ends `expiresIn` seconds from now (0: at once).
 * Answers the new key and its secret.
 */
export async function rollKey(sql: Sql, o: Owner, id: string, expiresIn: number, by: KeyCaller): Promise<{ row: ApiKeyRow; secret: string }> {
  if (expiresIn === 0 && id === by.keyId) {
    throw new ApiError(
      'resource_invalid_state',
      'This request is authenticated by the key you are rolling: with expires_in 0 it would stop working at once and lock you out. Give an overlap in expires_in, or roll it with another key.',
      'expires_in',
    );
  }
  const out = await store.rollApiKey(sql, o, id, expiresIn, (tx, made) => auditKey(tx, o, by, 'api_key.rolled', id, { new_key: made.id, expires_in: expiresIn }));
  if (out === 'missing') throw resourceMissing('api_key', id);
  if ('problem' in out) throw new ApiError('resource_invalid_state', out.problem, 'id');
  by.log.info({ apiKeyId: id, newApiKeyId: out.row.id, expiresIn }, 'api key rolled');
  return out;
}

/**
 * Revokes the key at once. Every process refuses it within its key cache's life
 * (API_KEY_CACHE_SECONDS, 2 s by default). Answers the revoked row.
 */
export async function revokeKey(sql: Sql, o: Owner, id: string, by: KeyCaller): Promise<ApiKeyRow> {
  if (id === by.keyId) {
    throw new ApiError(
      'resource_invalid_state',
      'This request is authenticated by the key you are revoking: revoking it would lock you out. Revoke it with another key of this account and mode.',
      'id',
    );
  }
  const revoked = (await sql.begin(async (tx) => {
    const row = await store.revokeApiKey(tx, o, id);
    if (row) await auditKey(tx, o, by, 'api_key.revoked', id);
    return row;
  })) as ApiKeyRow | undefined;
  if (!revoked) {
    // Nothing revoked: no such key here, or it had already ended (revoked, perhaps by a request just before, or expired).
    const row = await store.findApiKey(sql, o, id);
    if (!row) throw resourceMissing('api_key', id);
    throw new ApiError('resource_invalid_state', store.endedProblem(row) ?? 'This API key is already revoked.', 'id');
  }
  by.log.info({ apiKeyId: id }, 'api key revoked');
  return revoked;
}

/** Why a test key (or the dashboard in test mode) cannot change the account's settings. */
export const LIVE_SETTINGS_ONLY =
  'The account settings (business_name, support_email, brand_color, logo_url) are shared by test and live mode and change what live customers see: they need a live key (sk_live_…) or the dashboard in live mode. A test key can read them (GET /v1/account).';

/** Refuses a test key (or the dashboard in test mode) the account's settings, whatever it sends. */
export function assertLiveSettings(o: Owner): void {
  if (!o.livemode) throw new ApiError('forbidden', LIVE_SETTINGS_ONLY);
}

/**
 * Sets the account's branding (already validated by UpdateAccount: absent fields unchanged, null
 * clears), shared by both modes. POST/PATCH /v1/account and the dashboard's Settings page. Live
 * mode only (issue 21): the settings are the live pages' and the Reply-To of live emails, and a
 * leaked test key must not change what live customers see (403 permission_error).
 */
export async function updateAccount(sql: Sql, o: Owner, changes: Partial<AccountBranding>, log: Logger, actor: AuditActor): Promise<void> {
  assertLiveSettings(o);
  await sql.begin(async (tx) => {
    await setBranding(tx, o.accountId, changes);
    // Account-wide (livemode null): the settings are shared by both modes.
    await recordAudit(tx, { accountId: o.accountId, livemode: null, actor, action: 'account.settings_updated', data: changes });
  });
  log.info({ account: o.accountId, fields: Object.keys(changes).filter((k) => changes[k as keyof AccountBranding] !== undefined) }, 'account settings updated');
}
