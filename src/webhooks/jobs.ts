import type { JobsOptions, Queue } from 'bullmq';
import type { RedisClient } from '../queue/redis.ts';
import type { Services } from '../services.ts';
import { MAX_ATTEMPTS } from './deliveries.ts';
import { Lane } from './lane.ts';
import { intervalMs, reserveSlots } from './throttle.ts';

/** Where a delivery of a throttled endpoint goes: its endpoint and rate (deliveries per second). */
export interface ThrottleRoute {
  endpointId: string;
  rate: number;
}
/** Reserves `count` slots of an endpoint's throttle; the ms until the first (throttle.ts). */
export type Reserve = (endpointId: string, rate: number, count: number) => Promise<number>;

export const DELIVER_JOB = 'deliver';
export interface DeliverJobData {
  deliveryId: string;
  /** Set when the throttle delayed the job to a slot it holds (throttle.ts). */
  slot?: boolean;
}

/** States in which a job will still run (or is running): the delivery needs nothing more. */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** The first-attempt lane of a deployment and the Redis connection its producers use. */
export interface LaneAccess {
  lane: Lane;
  redis: RedisClient;
}

/**
 * Where deliveries wait for their attempts. A delivery due now goes to the first-attempt lane
 * (lane.ts: no BullMQ job); a failed attempt's retry is a BullMQ job, jobId = delivery id, with the
 * built-in exponential backoff (DESIGN 5), continuing the schedule: attempt n+1 waits
 * base × 2^(n-1) after attempt n, 7 attempts in all. A job id can be reused only once its old job is
 * gone, so bringing a delivery back (re-enable, reconcile) removes a finished job first.
 *
 * A delivery's job starts in `queue`. One that its endpoint's throttle makes wait moves to
 * `throttled` (webhook-throttled), delayed until its slot, and stays there (its retries too): a
 * woken job would otherwise wait behind every job queued meanwhile for other endpoints, and the
 * throttled endpoint would get far less than its rate under a backlog. A delivery has a job in one
 * of the two queues; both are looked at before one is added again.
 */
export class DeliveryJobs {
  readonly queue: Queue;
  readonly throttled: Queue | undefined;
  readonly backoffBaseMs: number;
  private readonly reserve: Reserve | undefined;
  private readonly lane: LaneAccess | undefined;

  /** Without a `lane`, a delivery due now gets a job of `queue` (benches that drive BullMQ alone). */
  constructor(queue: Queue, backoffBaseMs: number, throttled?: Queue, reserve?: Reserve, lane?: LaneAccess) {
    this.queue = queue;
    this.throttled = throttled;
    this.backoffBaseMs = backoffBaseMs;
    this.reserve = reserve;
    this.lane = lane;
  }

  private get queues(): Queue[] {
    return this.throttled ? [this.queue, this.throttled] : [this.queue];
  }

  options(id: string): JobsOptions {
    return {
      jobId: id,
      attempts: MAX_ATTEMPTS,
      backoff: { type: 'exponential', delay: this.backoffBaseMs },
      // The delivery row and its attempts are the history; a completed job need not stay in Redis.
      removeOnComplete: true,
      // Failed jobs stay a week, to be inspected and retried from Bull Board.
      removeOnFail: { age: 7 * 24 * 3600 },
    };
  }

  /** The wait after the `n`-th failed attempt of a delivery. */
  retryDelayMs(n: number): number {
    return this.backoffBaseMs * 2 ** (n - 1);
  }

  /**
   * The job of the next attempt after attempt `n` (made in the lane) failed: delayed by the
   * schedule, with the attempts left and a backoff that goes on from there (its kth failure waits
   * base × 2^(n+k-1), what attempt n+k waits in the schedule). A finished job of an earlier round
   * (a failed job kept a week) is removed first, or the add would be a no-op.
   */
  async addRetry(id: string, n: number): Promise<void> {
    await this.queue.remove(id);
    await this.queue.add(DELIVER_JOB, { deliveryId: id }, { ...this.options(id), attempts: MAX_ATTEMPTS - n, backoff: { type: 'exponential', delay: this.retryDelayMs(n + 1) }, delay: this.retryDelayMs(n) });
  }

  /**
   * Jobs for new deliveries: their ids are fresh, so a plain add. Attempt 1 starts at once, except
   * for the deliveries `routes` names (those of throttled endpoints): each endpoint's get consecutive
   * slots of its throttle, reserved in one call, and their jobs wait in the throttled queue until
   * their slot, so that each runs once. (A delivery enqueued without a route takes its slot when it runs.)
   */
  async add(ids: readonly string[], routes?: ReadonlyMap<string, ThrottleRoute>): Promise<void> {
    if (ids.length === 0) return;
    const throttled = this.throttled;
    const reserve = this.reserve;
    const plain = routes?.size && throttled && reserve ? ids.filter((id) => !routes.has(id)) : ids;
    if (plain.length < ids.length) {
      const byEndpoint = new Map<string, { rate: number; ids: string[] }>();
      for (const id of ids) {
        const r = routes!.get(id);
        if (!r) continue;
        const group = byEndpoint.get(r.endpointId) ?? { rate: r.rate, ids: [] };
        group.ids.push(id);
        byEndpoint.set(r.endpointId, group);
      }
      for (const [endpointId, g] of byEndpoint) {
        const first = await reserve!(endpointId, g.rate, g.ids.length);
        const step = intervalMs(g.rate);
        await throttled!.addBulk(g.ids.map((id, i) => ({ name: DELIVER_JOB, data: { deliveryId: id, slot: true }, opts: { ...this.options(id), delay: first + i * step } })));
      }
    }
    if (plain.length === 0) return;
    if (this.lane) await this.lane.lane.push(this.lane.redis, plain);
    else await this.queue.addBulk(plain.map((id) => ({ name: DELIVER_JOB, data: { deliveryId: id }, opts: this.options(id) })));
  }

  /** The job of a delivery that waits `delayMs` for its throttle slot, in the throttled queue. */
  async addThrottled(id: string, delayMs: number): Promise<void> {
    if (!this.throttled) throw new Error('no throttled queue');
    await this.throttled.add(DELIVER_JOB, { deliveryId: id, slot: true }, { ...this.options(id), delay: delayMs });
  }

  /**
   * Makes each delivery run now unless its job is live: a finished or missing job is replaced.
   * With `replaceDelayed`, a job waiting for a later retry is replaced too (resume: send now).
   * Returns the ids enqueued.
   */
  async revive(
    ids: readonly string[],
    opts: { replaceDelayed?: boolean; stillPending?: (ids: string[]) => Promise<string[]>; routes?: ReadonlyMap<string, ThrottleRoute> } = {},
  ): Promise<string[]> {
    const queues = this.queues;
    const gone = (st: string) => !LIVE.has(st) || (opts.replaceDelayed === true && st === 'delayed');
    // In the lane, or live in either queue: left alone (unless waiting for a later retry or slot and
    // `replaceDelayed`). The throttled queue first: its jobs are delayed (a cheap look-up), while
    // finding that a job is not in the delivery queue's wait list means reading the whole list.
    const inLane = this.lane ? await this.lane.lane.holds(this.lane.redis, ids) : ids.map(() => false);
    const dying = await Promise.all(ids.map(async (id, i) => {
      if (inLane[i]) return false;
      for (const q of [...queues].reverse()) if (!gone(await q.getJobState(id))) return false;
      return true;
    }));
    let dead = ids.filter((_, i) => dying[i]);
    // A job finishes only after its row is final; re-reading the rows after the job states closes the
    // race in which a delivery read as PENDING has meanwhile succeeded and its job completed.
    if (opts.stillPending) dead = await opts.stillPending(dead);
    for (const id of dead) for (const q of queues) await q.remove(id); // 0 when the job is locked by a worker: the add is then a no-op
    await this.add(dead, opts.routes);
    return dead;
  }

  /** Best effort: a job running right now cannot be removed, and finds its delivery CANCELLED or PAUSED. */
  async remove(ids: readonly string[]): Promise<void> {
    await Promise.all([...ids.flatMap((id) => this.queues.map((q) => q.remove(id))), this.lane?.lane.remove(this.lane.redis, ids)]);
  }
}

/** The delivery queue of a running service. */
/** What enqueuing a delivery needs: the queues and the retry schedule's base. */
export type DeliveryJobDeps = Pick<Services, 'queues' | 'config'>;

export function deliveryJobs(s: DeliveryJobDeps): DeliveryJobs {
  const reserve: Reserve = (endpointId, rate, count) => reserveSlots(s.queues.redis, s.config.redisPrefix, endpointId, rate, count);
  return new DeliveryJobs(s.queues.get('webhook-delivery'), s.config.webhookBackoffBaseMs, s.queues.get('webhook-throttled'), reserve, { lane: new Lane(s.config.redisPrefix), redis: s.queues.redis });
}
