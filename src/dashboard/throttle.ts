import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Services } from '../services.ts';

/**
 * Sign-in limits of the dashboard, per client address and per email, counted the way the hosted
 * pages count (src/pages/rate-limit.ts): in Redis, shared by every web process; in memory per
 * process while Redis is down or slow, so that the limits hold rather than lapse.
 */

const HOUR_SECONDS = 3600;
const REDIS_TIMEOUT_MS = 300;
const WARN_EVERY_MS = 60_000;

export interface SignInThrottle {
  /** Counts one attempt; the seconds until the next is allowed when it is over a limit, else null. */
  take(client: string, email: string): Promise<number | null>;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate limit counter took over ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const retryAfter = (r: RateLimiterRes) => Math.max(1, Math.ceil(r.msBeforeNext / 1000));

export function signInThrottle(s: Services): SignInThrottle {
  const log: Logger = s.log.child({ component: 'dashboard-rate-limit' });
  let lastWarn = 0;
  const limit = (name: string, points: number) => {
    if (points <= 0) return null;
    const keyPrefix = `${s.config.redisPrefix}:ratelimit:${name}`;
    const redis = new RateLimiterRedis({ storeClient: s.redis, keyPrefix, points, duration: HOUR_SECONDS, rejectIfRedisNotReady: true });
    const memory = new RateLimiterMemory({ keyPrefix, points, duration: HOUR_SECONDS });
    return async (key: string): Promise<number | null> => {
      try {
        await withTimeout(redis.consume(key), REDIS_TIMEOUT_MS);
        return null;
      } catch (err) {
        if (err instanceof RateLimiterRes) return retryAfter(err);
        if (Date.now() - lastWarn > WARN_EVERY_MS) {
          lastWarn = Date.now();
          log.warn({ err }, 'dashboard sign-in limits counted in memory: Redis is unavailable');
        }
      }
      try {
        await memory.consume(key);
        return null;
      } catch (err) {
        if (err instanceof RateLimiterRes) return retryAfter(err);
        throw err;
      }
    };
  };
  const perClient = limit('dash-signin-client', s.config.dashboard.signInPerClientPerHour);
  const perEmail = limit('dash-signin-email', s.config.dashboard.signInPerEmailPerHour);
  return {
    async take(client, email) {
      const results = await Promise.all([perClient?.(client) ?? null, perEmail?.(email.toLowerCase()) ?? null]);
      const refused = results.filter((r): r is number => r !== null);
      return refused.length ? Math.max(...refused) : null;
    },
  };
}
