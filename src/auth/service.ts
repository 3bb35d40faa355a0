import type { Logger } from 'pino';
import type { Sql } from '../db/sql.ts';
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
}

/** A new key of the owner's account and mode; the secret is answered here only. */
export async function createKey(sql: Sql, o: Owner, by: KeyCaller): Promise<{ row: ApiKeyRow; secret: string }> {
  const out = await store.createKey(sql, o);
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
  const out = await store.rollApiKey(sql, o, id, expiresIn);
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
  const revoked = await store.revokeApiKey(sql, o, id);
  if (!revoked) {
    // Nothing revoked: no such key here, or it had already ended (revoked, perhaps by a request just before, or expired).
    const row = await store.findApiKey(sql, o, id);
    if (!row) throw resourceMissing('api_key', id);
    throw new ApiError('resource_invalid_state', store.endedProblem(row) ?? 'This API key is already revoked.', 'id');
  }
  by.log.info({ apiKeyId: id }, 'api key revoked');
  return revoked;
}

/**
 * Sets the account's branding (already validated by UpdateAccount: absent fields unchanged, null
 * clears), shared by both modes. POST/PATCH /v1/account and the dashboard's Settings page.
 */
export async function updateAccount(sql: Sql, o: Owner, changes: Partial<AccountBranding>, log: Logger): Promise<void> {
  await setBranding(sql, o.accountId, changes);
  log.info({ account: o.accountId, fields: Object.keys(changes).filter((k) => changes[k as keyof AccountBranding] !== undefined) }, 'account settings updated');
}
