import { isIPv6 } from 'node:net';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Services } from '../services.ts';

/**
 * Card-testing limits of the hosted pages (docs/decisions.md, "Card testing limits"). The only
 * place the limits touch Redis. Counts live in Redis, shared by every web process; while Redis is
 * down or slow each process counts in memory instead, so the limits hold (per process) rather
 * than lapse.
 */

const HOUR_SECONDS = 3600;
/** Redis answers a counter in well under a millisecond; past this the memory count decides. */
const REDIS_TIMEOUT_MS = 300;
/** At most one "fallback" warning per process in this interval, however many requests fall back. */
const WARN_EVERY_MS = 60_000;

/** A refused request: how long until the client may try again. */
export interface Throttled {
  retryAfterSeconds: number;
}

class TimeoutError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`rate limit counter took over ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** One hourly limit: a Redis counter with an in-memory stand-in. */
export class HourlyLimit {
  private readonly redis: RateLimiterRedis;
  private readonly memory: RateLimiterMemory;
  private readonly fellBack: (err: unknown) => void;
  readonly points: number;

  constructor(s: Services, name: string, points: number, fellBack: (err: unknown) => void) {
    this.fellBack = fellBack;
    this.points = points;
    const keyPrefix = `${s.config.redisPrefix}:ratelimit:${name}`;
    // rejectIfRedisNotReady: while the connection is down the memory count answers at once.
    this.redis = new RateLimiterRedis({ storeClient: s.redis, keyPrefix, points, duration: HOUR_SECONDS, rejectIfRedisNotReady: true });
    this.memory = new RateLimiterMemory({ keyPrefix, points, duration: HOUR_SECONDS });
  }

  /** Counts one request for `key`; a Throttled when it is over the limit. */
  async take(key: string): Promise<Throttled | null> {
    try {
      await withTimeout(this.redis.consume(key), REDIS_TIMEOUT_MS);
      return null;
    } catch (err) {
      if (err instanceof RateLimiterRes) return throttled(err);
      this.fellBack(err);
    }
    try {
      await this.memory.consume(key);
      return null;
    } catch (err) {
      if (err instanceof RateLimiterRes) return throttled(err);
      throw err;
    }
  }

  /** What `key` has used this hour, counting nothing: how many, and a Throttled when that is the whole limit. */
  async peek(key: string): Promise<{ used: number; over: Throttled | null }> {
    const res = await this.either((l) => l.get(key));
    const used = res?.consumedPoints ?? 0;
    return { used, over: res && used >= this.points ? throttled(res) : null };
  }

  /** Counts one for `key` without refusing anything (a failure to remember); answers the count. */
  async add(key: string): Promise<number> {
    return (await this.either((l) => l.penalty(key, 1))).consumedPoints;
  }

  /** Forgets `key`'s count. */
  async reset(key: string): Promise<void> {
    await this.either((l) => l.delete(key));
  }

  /** One call on the Redis counter, or on the memory one while Redis is down or slow. */
  private async either<T>(call: (l: RateLimiterRedis | RateLimiterMemory) => Promise<T>): Promise<T> {
    try {
      return await withTimeout(call(this.redis), REDIS_TIMEOUT_MS);
    } catch (err) {
      this.fellBack(err);
    }
    return call(this.memory);
  }
}

const throttled = (res: RateLimiterRes): Throttled => ({ retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) });

/** The first refusal of several counters taken together (each is counted either way). */
export async function takeAll(takes: Array<Promise<Throttled | null> | null>): Promise<Throttled | null> {
  const results = await Promise.all(takes);
  const refused = results.filter((r): r is Throttled => r !== null);
  if (!refused.length) return null;
  return { retryAfterSeconds: Math.max(...refused.map((r) => r.retryAfterSeconds)) };
}

/** What HourlyLimit calls when Redis fails it: one warning per WARN_EVERY_MS, however many requests fall back. */
export function fallbackWarning(log: Logger, message: string): (err: unknown) => void {
  let lastWarn = 0;
  return (err) => {
    if (Date.now() - lastWarn < WARN_EVERY_MS) return;
    lastWarn = Date.now();
    log.warn({ err }, message);
  };
}

export interface HostedPageLimits {
  /** A payer's post of a payment link's form, which opens a checkout session. */
  openSession(clientAddress: string, linkId: string): Promise<Throttled | null>;
  /** A card submitted on a hosted checkout page. */
  payAttempt(clientAddress: string, sessionId: string): Promise<Throttled | null>;
}

const perServices = new WeakMap<Services, HostedPageLimits>();

/** The limits of this process's services (one memory count per process, shared by every router). */
export function hostedPageLimits(s: Services): HostedPageLimits {
  let limits = perServices.get(s);
  if (limits) return limits;
  const fellBack = fallbackWarning(s.log.child({ component: 'rate-limit' }), 'rate limits counted in memory: Redis is unavailable');
  const { linkSessionsPerHour, payPerClientPerHour, payPerSessionPerHour } = s.config.rateLimits;
  // A limit set to 0 is off.
  const limit = (name: string, points: number) => (points > 0 ? new HourlyLimit(s, name, points, fellBack) : null);
  const linkSessions = limit('link-sessions', linkSessionsPerHour);
  const payPerClient = limit('pay-client', payPerClientPerHour);
  const payPerSession = limit('pay-session', payPerSessionPerHour);

  limits = {
    openSession: (client, linkId) => takeAll([linkSessions?.take(`${linkId}:${client}`) ?? null]),
    payAttempt: (client, sessionId) => takeAll([payPerClient?.take(client) ?? null, payPerSession?.take(sessionId) ?? null]),
  };
  perServices.set(s, limits);
  return limits;
}

/**
 * The client the limits count by: the socket's address, or a forwarded one only from TRUST_PROXY.
 * An IPv6 client counts by its /64, the block one subscriber usually holds whole: otherwise it
 * could take a fresh address for every post.
 */
export function clientAddress(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv6(ip)) return `${ipv6Prefix64(ip)}::/64`;
  return ip;
}

/** The first four groups of an IPv6 address, '::' expanded. */
function ipv6Prefix64(ip: string): string {
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':');
}

/** Marks a 429 answer with Retry-After; answers the sentence that tells the payer how long to wait. */
export function throttledAnswer(res: Response, t: Throttled): string {
  res.setHeader('Retry-After', String(t.retryAfterSeconds));
  const minutes = Math.ceil(t.retryAfterSeconds / 60);
  return `Please try again in ${minutes === 1 ? 'a minute' : `${minutes} minutes`}.`;
}
