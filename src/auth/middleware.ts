import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { AuditActor } from '../audit/store.ts';
import type { Sql } from '../db/sql.ts';
import { setBounded } from '../lib/bounded.ts';
import { ApiError } from '../lib/errors.ts';
import { findKey, KEY_PATTERN, type KeyMatch } from './keys.ts';
import { checkScope } from './scopes.ts';
import { touchKey } from './store.ts';

const MAX_CACHED = 10_000;
/** `last_used_at` is written at most this often per key per process. */
const TOUCH_EVERY_MS = 60_000;

/** The key a request was admitted with: its id and its redacted form, made once per cached key. */
interface Caller {
  keyId: string;
  label: string;
}
/** The caller's slot on a request: a symbol, not a WeakMap entry per request (see src/lib/http.ts, BASE_LOG). */
const CALLER = Symbol('caller');
type CallerSlot = Request & { [CALLER]?: Caller };

/**
 * Who an API request acts as, for the audit log (issue 25): the key's id and its redacted form
 * (`sk_test_…x9Qe`), never the secret, and the client's address.
 */
export function apiActor(req: Request): AuditActor {
  const caller = (req as CallerSlot)[CALLER];
  return { type: 'api_key', id: caller?.keyId ?? 'unknown', label: caller?.label ?? 'sk_…', ip: req.ip ?? null };
}

/** The id of the API key that authenticated this request (set by `authenticate`). */
export function callingKeyId(req: Request): string | undefined {
  return (req as CallerSlot)[CALLER]?.keyId;
}

/**
 * Resolves `Authorization: Bearer sk_…` to its account and mode. Answers (found or not) are cached
 * for a short while in this process (API_KEY_CACHE_SECONDS, 2 s by default), never past the key's
 * `expires_at`, so a busy key costs one lookup per TTL and a revoked or expired key is refused
 * within that TTL in every process.
 */
export function authenticate(sql: Sql, ttlMs: number, log?: Logger): RequestHandler {
  interface Cached {
    match: KeyMatch | null;
    expires: number;
    caller: Caller | null;
  }
  const cache = new Map<string, Cached>();
  const touched = new Map<string, number>();

  async function lookup(key: string): Promise<Cached> {
    const now = Date.now();
    const match = await findKey(sql, key);
    const until = match?.expiresAt ? Math.min(now + ttlMs, match.expiresAt.getTime()) : now + ttlMs;
    const entry = { match, expires: until, caller: match ? { keyId: match.keyId, label: `${key.slice(0, 8)}…${key.slice(-4)}` } : null };
    setBounded(cache, MAX_CACHED, key, entry);
    return entry;
  }

  /** Records the use off the request's path: not awaited, at most once a minute per key here. */
  function touch(keyId: string, now: number): void {
    const last = touched.get(keyId);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    setBounded(touched, MAX_CACHED, keyId, now);
    touchKey(sql, keyId).catch((err: unknown) => log?.warn({ err, keyId }, 'could not record api key use'));
  }

  function admit(req: Request, key: string, entry: Cached, next: () => void): void {
    const found = entry.match;
    const now = Date.now();
    if (!found || (found.expiresAt && found.expiresAt.getTime() <= now)) {
      throw new ApiError('api_key_invalid', `Invalid API key provided: ${key.slice(0, 8)}…${key.slice(-4)}`);
    }
    req.auth = found.owner;
    (req as CallerSlot)[CALLER] = entry.caller!;
    touch(found.keyId, now);
    // A restricted key: every route checks its resource and method here, before any router runs.
    if (found.permissions) checkScope(found.permissions, req.method, req.path);
    next();
  }

  // A key cached and still fresh is admitted synchronously (issue 28.2: no promise and no microtask
  // per request on the hot path); only a lookup in Postgres answers a promise, which Express awaits.
  return (req, _res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      throw new ApiError('api_key_missing', 'You did not provide an API key. Send it as `Authorization: Bearer sk_…`.');
    }
    const match = /^Bearer (\S+)$/i.exec(header.trim());
    const key = match?.[1];
    if (!key || !KEY_PATTERN.test(key)) {
      throw new ApiError('api_key_invalid', 'Malformed Authorization header: expected `Bearer sk_test_…` or `Bearer sk_live_…`.');
    }
    const hit = cache.get(key);
    if (hit && hit.expires > Date.now()) return admit(req, key, hit, next);
    return lookup(key).then((entry) => admit(req, key, entry, next));
  };
}
