import type { RedisClient } from '../queue/redis.ts';

/** Redis's clock in ms (`now`): every script reads it, so the workers' clocks do not matter. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Leaves one token on the wake list (KEYS[3]), for a worker waiting on it: never more than one. */
const WAKE = `  redis.call('LPUSH', KEYS[3], '1')
  redis.call('LTRIM', KEYS[3], 0, 0)
`;

/**
 * The first-attempt lane (issue 28.5): where a new delivery waits for its first attempt, without a
 * BullMQ job of its own. A BullMQ job costs three Lua scripts in Redis (add, fetch, finish) and their
 * decoding in the worker for every delivery; the lane costs a share of one script per batch. Retries,
 * throttled deliveries and Bull Board's retries stay BullMQ jobs (jobs.ts).
 *
 * Three keys, one hash tag (one slot of a Redis Cluster, so each script touches one slot):
 * - `ready`, a sorted set: the deliveries waiting, scored by when they are due (when they came, or
 *   a little later for one put back after a failed run: `release`);
 * - `active`, a sorted set: the deliveries a worker took, scored by when its lease runs out;
 * - `wake`, a list of at most one token: pushed when deliveries come, popped by a waiting worker
 *   (BLPOP), so that an idle worker starts at once and no worker polls faster than once a second.
 *
 * A delivery is in at most one of the two sets: `push` leaves out what is already in either. `take`
 * moves up to N from `ready` to `active` with a lease, which the worker renews while the delivery
 * runs (`renew`, as BullMQ renews a job's lock); a worker that ends a delivery removes it (`done`).
 * A run that fails (Postgres away) puts its delivery back, due a little later (`release`). A lease
 * that runs out (the worker was killed or stopped mid-run) is taken again by the next `take`: the
 * row decides then, so a delivery already recorded is not sent again (deliver.ts). The rows in
 * Postgres remain the truth: if Redis loses the keys, the reconcile pass finds the PENDING
 * deliveries that are due and in neither set nor any queue, and pushes them again.
 */
const PUSH = `
${NOW}
local added = 0
for i = 1, #ARGV do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then added = added + redis.call('ZADD', KEYS[1], 'NX', now, ARGV[i]) end
end
if added > 0 then
${WAKE}end
return added
`;

/**
 * Answers {how many of them were leases that ran out, id…}: first those, then the waiting ones that
 * are due (oldest first; a delivery put back after a failed run waits until its score). Wakes
 * another worker if more are due.
 */
const TAKE = `
${NOW}
local n = tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, n)
local reclaimed = #ids
if #ids < n then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, n - #ids)
  if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
  for _, id in ipairs(due) do ids[#ids + 1] = id end
end
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id) end
if redis.call('ZCOUNT', KEYS[1], '-inf', now) > 0 then
${WAKE}end
table.insert(ids, 1, reclaimed)
return ids
`;

/** Puts taken deliveries back to wait, due in ARGV[1] ms (a run that failed: Postgres away, say). */
const RELEASE = `
${NOW}
local due = now + tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  if redis.call('ZREM', KEYS[2], ARGV[i]) == 1 then n = n + redis.call('ZADD', KEYS[1], due, ARGV[i]) end
end
return n
`;

/** Extends the leases of the deliveries a live worker is running (those it still holds). */
const RENEW = `
${NOW}
local until_ = now + tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', until_, ARGV[i]) end
return n
`;

type WithScripts = RedisClient & {
  laneRelease(ready: string, active: string, delayMs: number, ...ids: string[]): Promise<number>;
  laneRenew(active: string, leaseMs: number, ...ids: string[]): Promise<number>;
  lanePush(ready: string, active: string, wake: string, ...ids: string[]): Promise<number>;
  laneTake(ready: string, active: string, wake: string, count: number, leaseMs: number): Promise<[number, ...string[]]>;
};
const defined = new WeakSet<RedisClient>();

function withScripts(redis: RedisClient): WithScripts {
  if (!defined.has(redis)) {
    redis.defineCommand('lanePush', { numberOfKeys: 3, lua: PUSH });
    redis.defineCommand('laneTake', { numberOfKeys: 3, lua: TAKE });
    redis.defineCommand('laneRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('laneRelease', { numberOfKeys: 2, lua: RELEASE });
    defined.add(redis);
  }
  return redis as WithScripts;
}

/** What one `take` handed out: the ids, and how many of them had a lease that ran out. */
export interface Taken {
  ids: string[];
  reclaimed: number;
}

export class Lane {
  readonly ready: string;
  readonly active: string;
  readonly wake: string;

  constructor(prefix: string) {
    const base = `${prefix}:{webhook-lane}`;
    this.ready = `${base}:ready`;
    this.active = `${base}:active`;
    this.wake = `${base}:wake`;
  }

  /** Adds deliveries for their first attempt (those already waiting or taken are left as they are); answers how many were added. */
  async push(redis: RedisClient, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return Number(await withScripts(redis).lanePush(this.ready, this.active, this.wake, ...ids));
  }

  /** Takes at most `count` deliveries, each leased for `leaseMs`: first those whose lease ran out, then the oldest waiting. */
  async take(redis: RedisClient, count: number, leaseMs: number): Promise<Taken> {
    const [reclaimed, ...ids] = await withScripts(redis).laneTake(this.ready, this.active, this.wake, count, leaseMs);
    return { ids, reclaimed: Number(reclaimed) };
  }

  /** Extends the leases of deliveries still running to `leaseMs` from now (as BullMQ renews a job's lock). */
  async renew(redis: RedisClient, ids: readonly string[], leaseMs: number): Promise<void> {
    if (ids.length > 0) await withScripts(redis).laneRenew(this.active, leaseMs, ...ids);
  }

  /** Puts taken deliveries back to wait `delayMs` before they are due again (their run failed). */
  async release(redis: RedisClient, ids: readonly string[], delayMs: number): Promise<void> {
    if (ids.length > 0) await withScripts(redis).laneRelease(this.ready, this.active, delayMs, ...ids);
  }

  /** Ends the leases of deliveries whose run is over (recorded, skipped or handed to a queue). */
  async done(redis: RedisClient, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await redis.zrem(this.active, ...ids);
  }

  /** Takes waiting deliveries out (cancelled, paused): one already taken finds its row changed. */
  async remove(redis: RedisClient, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await redis.zrem(this.ready, ...ids);
  }

  /** Which of `ids` the lane holds (waiting, or taken: a lease that ran out is taken again). */
  async holds(redis: RedisClient, ids: readonly string[]): Promise<boolean[]> {
    if (ids.length === 0) return [];
    const [ready, active] = await Promise.all([redis.zmscore(this.ready, ...ids), redis.zmscore(this.active, ...ids)]);
    return ids.map((_, i) => ready[i] !== null || active[i] !== null);
  }

  /** How many wait, and how many are taken: read at a scrape (queue_jobs{queue="webhook-lane"}). */
  async counts(redis: RedisClient): Promise<{ waiting: number; active: number }> {
    const [waiting, active] = await Promise.all([redis.zcard(this.ready), redis.zcard(this.active)]);
    return { waiting, active };
  }
}
