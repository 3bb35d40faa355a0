import type { RequestHandler } from 'express';
import type { Sql } from '../db/sql.ts';
import { ApiError } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { findKeyOwner, KEY_PATTERN } from './keys.ts';

const MAX_CACHED = 10_000;

/**
 * Resolves `Authorization: Bearer sk_…` to its account and mode. Answers (found or not) are cached
 * for a short while in this process, so a busy key costs one lookup per TTL, not one per request.
 */
export function authenticate(sql: Sql, ttlMs: number): RequestHandler {
  const cache = new Map<string, { owner: Owner | null; expires: number }>();

  async function lookup(key: string): Promise<Owner | null> {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.expires > now) return hit.owner;
    const owner = await findKeyOwner(sql, key);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, { owner, expires: now + ttlMs });
    return owner;
  }

  return async (req, _res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      throw new ApiError('api_key_missing', 'You did not provide an API key. Send it as `Authorization: Bearer sk_…`.');
    }
    const match = /^Bearer (\S+)$/i.exec(header.trim());
    const key = match?.[1];
    if (!key || !KEY_PATTERN.test(key)) {
      throw new ApiError('api_key_invalid', 'Malformed Authorization header: expected `Bearer sk_test_…` or `Bearer sk_live_…`.');
    }
    const owner = await lookup(key);
    if (!owner) throw new ApiError('api_key_invalid', `Invalid API key provided: ${key.slice(0, 8)}…${key.slice(-4)}`);
    req.auth = owner;
    next();
  };
}
