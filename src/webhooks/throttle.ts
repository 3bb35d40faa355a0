import type { RedisClient } from '../queue/redis.ts';

/**
 * The per-endpoint throttle (issue 26, point 2): a GCRA (generic cell rate algorithm) per endpoint in
 * Redis, shared by every worker process, in one Lua script on one key. Redis's own clock decides, so
 * the workers' clocks do not matter.
 *
 * The key is a hash of two times, in Redis milliseconds:
 * - `tat`: the earliest moment the next delivery may go (the last one plus the interval, 1000 / rate);
 *   nothing goes earlier, so no two deliveries are ever closer than the interval;
 * - `horizon`: the end of the slots handed out to throttled deliveries. A delivery that cannot go now
 *   reserves the next free slot and waits as a delayed job until then, so a backlog of N deliveries is
 *   spread over N intervals and each job wakes about once: none occupies a worker waiting, and none
 *   polls. A delivery woken for its slot (`reserved`) may go as soon as `tat` allows; a fresh one may
 *   go at once only while no slot is handed out, so the queue is first come, first served.
 *
 * With a count (ARGV[3]), it reserves that many slots in a row, as jobs are added (jobs.ts), and
 * answers the wait until the first: the jobs are added delayed to their slots, each run once.
 *
 * Answers 0 (send now) or how many ms to wait. A reserved delivery that finds `tat` ahead (the one
 * before it went late) waits for `tat` only, keeping its place. The key expires a minute after its
 * last slot. Flushed or expired, the bucket is simply full again: the jobs are brought back by the
 * reconciler and reserve slots afresh.
 */
const GCRA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local reserved = ARGV[2] == '1'
local count = tonumber(ARGV[3] or '0')
local v = redis.call('HMGET', KEYS[1], 'tat', 'horizon')
local tat = tonumber(v[1]) or 0
local horizon = tonumber(v[2]) or 0
local wait
if count > 0 then
  local slot = math.max(horizon, tat, now)
  horizon = slot + count * interval
  wait = slot - now
elseif now >= tat and (reserved or horizon <= now) then
  tat = now + interval
  wait = 0
elseif reserved then
  wait = tat - now
else
  local slot = math.max(horizon, tat, now)
  horizon = slot + interval
  wait = slot - now
end
redis.call('HSET', KEYS[1], 'tat', tat, 'horizon', horizon)
redis.call('PEXPIRE', KEYS[1], math.max(tat, horizon) - now + 60000)
return wait
`;

type WithGcra = RedisClient & { webhookGcra(key: string, intervalMs: number, reserved: string, count?: number): Promise<number> };
const defined = new WeakSet<RedisClient>();

/** The script as a command of `redis` (EVALSHA, EVAL again after a SCRIPT FLUSH): defined on first use. */
function withGcra(redis: RedisClient): WithGcra {
  if (!defined.has(redis)) {
    redis.defineCommand('webhookGcra', { numberOfKeys: 1, lua: GCRA });
    defined.add(redis);
  }
  return redis as WithGcra;
}

/**
 * The key of an endpoint's bucket: its own hash tag, so a Redis Cluster spreads the endpoints over its
 * shards (and the script's one key is in one slot whatever happens).
 */
export const throttleKey = (prefix: string, endpointId: string): string => `${prefix}:webhook-throttle:{${endpointId}}`;

/** The spacing of deliveries at `ratePerSecond`, in ms (rounded up: never faster than the rate). */
export const intervalMs = (ratePerSecond: number): number => Math.ceil(1000 / ratePerSecond);

/**
 * Takes a slot for one delivery to `endpointId` at `ratePerSecond`: 0 to send now, else the ms to wait
 * (then call again with `reserved`: the delivery holds the slot it was given).
 */
export async function takeSlot(redis: RedisClient, prefix: string, endpointId: string, ratePerSecond: number, reserved: boolean): Promise<number> {
  return Number(await withGcra(redis).webhookGcra(throttleKey(prefix, endpointId), intervalMs(ratePerSecond), reserved ? '1' : '0'));
}

/** Reserves `count` consecutive slots for deliveries about to be enqueued; answers the ms until the first (the others follow at the interval). */
export async function reserveSlots(redis: RedisClient, prefix: string, endpointId: string, ratePerSecond: number, count: number): Promise<number> {
  return Number(await withGcra(redis).webhookGcra(throttleKey(prefix, endpointId), intervalMs(ratePerSecond), '0', count));
}

/** Forgets an endpoint's bucket (its rate changed, it was paused or deleted): no stale slots are kept. */
export async function resetThrottle(redis: RedisClient, prefix: string, endpointId: string): Promise<void> {
  await redis.del(throttleKey(prefix, endpointId));
}
