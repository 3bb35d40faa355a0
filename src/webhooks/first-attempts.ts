import type { Logger } from '../lib/logger.ts';
import { workerConnection, type RedisClient } from '../queue/redis.ts';
import type { Services } from '../services.ts';
import { Batcher } from './batcher.ts';
import { runDelivery, type DeliveryRun } from './deliver.ts';
import { deliveryJobs, type DeliveryJobs } from './jobs.ts';
import { Lane } from './lane.ts';

/** How long a worker waits for a wake before it looks at the lane again (leases that ran out are taken then). */
const WAIT_SECONDS = 1;
/** After Redis refused a take: the pause before the next try. */
const RETRY_MS = 1000;
/** A delivery whose run failed is due again after 1, 2, 4 … s, at most a minute (counted per process). */
const RELEASE_FIRST_MS = 1000;
const RELEASE_MAX_MS = 60_000;
/** The failure counts kept at most (a delivery that fails here and succeeds elsewhere is never cleared). */
const FAILURES_KEPT = 10_000;
/** Runs of a worker at most, per request it may have in flight (runs past their request, recording). */
export const RUNS_PER_SLOT = 4;

/**
 * A delivery's run from the lane: no job. A failure that leaves the delivery PENDING becomes a
 * BullMQ retry job (jobs.ts addRetry); if that add fails (Redis away), the row is PENDING and due at
 * its next_attempt_at, and the reconcile pass brings it back. A throttled endpoint's delivery is
 * handed to the throttled queue with a slot reserved, as the fan-out does for one it knows is throttled.
 */
function laneRun(jobs: DeliveryJobs, log: Logger, deliveryId: string, outcome: { failed: boolean }, sent: () => void): DeliveryRun {
  return {
    deliveryId,
    sent,
    retryDelayMs: (n) => jobs.retryDelayMs(n),
    throttle: async (endpointId, rate) => {
      await jobs.add([deliveryId], new Map([[deliveryId, { endpointId, rate }]]));
      return 'throttled: handed to the throttled queue';
    },
    retry: async (why, n) => {
      outcome.failed = true;
      try {
        await jobs.addRetry(deliveryId, n);
        return `${why}; retried by a job`;
      } catch (err) {
        log.warn({ err, deliveryId }, 'retry job not added; the reconcile pass will enqueue the delivery when it is due');
        return `${why}; its retry job was not added`;
      }
    },
    giveUp: (why) => {
      outcome.failed = true;
      return `${why}; no attempts left`;
    },
  };
}

/**
 * The worker of the first-attempt lane (lane.ts), run beside the delivery queue's BullMQ worker in
 * every worker process: up to `concurrency` requests in flight at once (and RUNS_PER_SLOT times as
 * many runs, those past their request waiting on their record), taken from the lane as many as it
 * has room for in one script. When the lane is empty it waits on the wake list (BLPOP on a
 * connection of its own), so a new delivery starts at once and an idle worker asks Redis once a
 * second. `stop()` takes nothing more and resolves once the runs in flight have ended (each is
 * bounded by the attempt's timeout). The leases of the runs in flight are renewed every half
 * WORKER_LOCK_MS; a killed process (or one that SHUTDOWN_TIMEOUT_MS ended mid-run) leaves leases
 * that another worker takes once they run out, WORKER_LOCK_MS later, as BullMQ does with a job's lock.
 */
export function startFirstAttempts(s: Services, concurrency: number): { stop(): Promise<void> } {
  const log = s.log.child({ queue: 'webhook-lane' });
  const lane = new Lane(s.config.redisPrefix);
  const jobs = deliveryJobs(s);
  const leaseMs = s.config.workerLockMs;
  // Commands that wait for Redis to come back rather than fail; the wait blocks its own connection.
  const redis: RedisClient = workerConnection(s.redis);
  const blocking: RedisClient = workerConnection(s.redis);
  const done = new Batcher<string, void>(async (ids) => {
    await lane.done(redis, ids);
    return ids.map(() => undefined);
  });
  const completed = s.metrics.jobDuration.labels({ queue: 'webhook-lane', outcome: 'completed' });
  const failed = s.metrics.jobDuration.labels({ queue: 'webhook-lane', outcome: 'failed' });
  const running = new Map<Promise<void>, string>();
  // Runs whose request has not yet ended: at most `concurrency`, as many requests in flight as a
  // client with that concurrency has. A run whose request ended goes on to its record and the end
  // of its lease (up to RUNS_PER_SLOT × concurrency such runs): the records of the requests that
  // end meanwhile then go in larger batches, while the next requests are already out.
  let sending = 0;
  const maxRuns = concurrency * RUNS_PER_SLOT;
  const failures = new Map<string, number>();
  // Lost renewals (Redis away) only shorten a lease: the run goes on, and its record decides.
  const renewal = setInterval(() => lane.renew(redis, [...running.values()], leaseMs).catch(() => {}), leaseMs / 2).unref();
  let stopped = false;
  let freed: (() => void) | null = null;
  let quiet = false;

  const run = (id: string): void => {
    const t0 = performance.now();
    // Observed as a job's run would be: `failed` when its attempt failed (or it could not run).
    const outcome = { failed: false };
    sending++;
    let holds = true;
    const release = () => {
      if (!holds) return;
      holds = false;
      sending--;
      freed?.();
    };
    const p = runDelivery(s, laneRun(jobs, log, id, outcome, release))
      .then(
        async () => {
          (outcome.failed ? failed : completed).observe((performance.now() - t0) / 1000);
          failures.delete(id);
          // Ended: its lease goes. Lost (Redis away), it runs out and the row says there is nothing to do.
          await done.push(id).catch(() => {});
        },
        // Not ended (Postgres away, say): put back, due again a little later (later each time it fails
        // here). Lost (Redis away too), its lease runs out and it is taken again then.
        async (err: unknown) => {
          failed.observe((performance.now() - t0) / 1000);
          const n = (failures.get(id) ?? 0) + 1;
          if (failures.size >= FAILURES_KEPT) failures.clear();
          failures.set(id, n);
          const delay = Math.min(RELEASE_FIRST_MS * 2 ** (n - 1), RELEASE_MAX_MS);
          log.warn({ err, deliveryId: id, retryInMs: delay }, 'delivery run failed; put back in the lane');
          await lane.release(redis, [id], delay).catch(() => {});
        },
      )
      .finally(() => {
        running.delete(p);
        release();
        freed?.();
      });
    running.set(p, id);
  };

  const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

  const loop = (async () => {
    while (!stopped) {
      const room = Math.min(concurrency - sending, maxRuns - running.size);
      if (room <= 0) {
        await new Promise<void>((resolve) => (freed = resolve));
        freed = null;
        // Runs that end together (one record batch) free their slots together: taken in one script.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      try {
        const taken = await lane.take(redis, room, leaseMs);
        quiet = false;
        // Taken even as the worker stops: they run, and stop() waits for them.
        if (taken.reclaimed > 0) s.metrics.webhookLaneReclaimed.inc(taken.reclaimed);
        for (const id of taken.ids) run(id);
        if (taken.ids.length === 0) await blocking.blpop(lane.wake, WAIT_SECONDS);
      } catch (err) {
        if (stopped) break;
        if (!quiet) log.error({ err }, 'webhook lane: Redis refused; trying again');
        quiet = true;
        await pause(RETRY_MS);
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      freed?.();
      blocking.disconnect();
      await loop;
      await Promise.all([...running.keys()]);
      clearInterval(renewal);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
