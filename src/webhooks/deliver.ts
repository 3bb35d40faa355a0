import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { presentEventJson } from '../events/presenter.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import { nowUnix } from '../lib/time.ts';
import type { Services } from '../services.ts';
import type { Sql } from '../db/sql.ts';
import { Batcher } from './batcher.ts';
import {
  MAX_ATTEMPTS,
  cancelDelivery,
  duePending,
  EVENT_EXPIRED,
  findDeliveries,
  loadAttemptContexts,
  pauseIfInactive,
  stillPending,
  type AttemptContext,
  type AttemptRecord,
  type DeliveryStatus,
} from './deliveries.ts';
import { actOnHealth, healthSettings, recordOutcomes, type Outcome } from './health.ts';
import { throttleRoutes } from './fanout.ts';
import { deliveryJobs, type DeliverJobData } from './jobs.ts';
import { parkBehindEarlier, wakeNext, wakeOrphans } from './ordering.ts';
import { send } from './sender.ts';
import { signatureHeader } from './signing.ts';
import { signingSecrets } from './store.ts';
import { takeSlot } from './throttle.ts';
import { targetPolicy } from './url.ts';

interface Batchers {
  load: Batcher<string, AttemptContext | typeof EVENT_EXPIRED | undefined>;
  record: Batcher<AttemptRecord, Outcome>;
}
const batchersByPool = new WeakMap<Sql, Batchers>();

/**
 * How many loads, and how many records, of a process run at once (Batcher): the deliveries that
 * finish meanwhile wait for one to end and go together. One record at a time: the records of one
 * endpoint's batches serialise on its hourly row anyway (stats.ts), so a second would mostly wait.
 */
const LOADS_IN_FLIGHT = 2;
const RECORDS_IN_FLIGHT = 1;

/** The deliveries running at the same moment share their reads and writes (one statement, or one transaction, each). */
function batchers(s: Services): Batchers {
  const sql = s.sql;
  let b = batchersByPool.get(sql);
  if (!b) {
    const h = healthSettings(s.config);
    b = {
      load: new Batcher((ids) => loadAttemptContexts(sql, ids), 100, LOADS_IN_FLIGHT),
      record: new Batcher((records) => recordOutcomes(sql, records, h), 100, RECORDS_IN_FLIGHT),
    };
    batchersByPool.set(sql, b);
  }
  return b;
}

/**
 * What runs a delivery: a BullMQ job (its retries, throttled deliveries, Bull Board's retries) or
 * the first-attempt lane (lane.ts), which has no job. Each says how its failures go on.
 */
export interface DeliveryRun {
  deliveryId: string;
  /** The ms until the next attempt if attempt `n` fails (recorded as next_attempt_at). */
  retryDelayMs(n: number): number;
  /** Null when the throttled endpoint's delivery may go now; else what was done instead (it waits for its slot). */
  throttle(endpointId: string, rate: number): Promise<string | null>;
  /** Attempt `n` failed and the delivery is still PENDING: schedules the next (a job throws; the lane adds a retry job). */
  retry(why: string, n: number): Promise<string>;
  /** Attempt `n` failed and was the last. */
  giveUp(why: string): string;
  /** The attempt's request has ended (answered, failed or timed out); its outcome is not yet recorded. */
  sent?(): void;
}

/** A BullMQ job's run: failing throws, so that BullMQ schedules the next attempt with the job's backoff. */
export function jobRun(s: Services, job: Job<DeliverJobData>, token?: string): DeliveryRun {
  const backoff = job.opts.backoff;
  const base = typeof backoff === 'object' && backoff.delay !== undefined ? backoff.delay : deliveryJobs(s).backoffBaseMs;
  return {
    deliveryId: job.data.deliveryId,
    // BullMQ's exponential backoff after this run's failure (the job's attemptsMade + 1).
    retryDelayMs: () => base * 2 ** job.attemptsMade,
    // Without the worker's lock (`token`), the job cannot be moved: the throttle is not applied.
    throttle: (endpointId, rate) => (token === undefined ? Promise.resolve(null) : throttle(s, job, token, endpointId, rate)),
    retry: (why) => {
      throw new Error(why);
    },
    giveUp: (why) => {
      throw new UnrecoverableError(`${why}; no attempts left`);
    },
  };
}

/**
 * One run of a delivery. The delivery row decides what happens, never the job or the lane alone: a
 * run for a delivery already SUCCEEDED or CANCELLED (a duplicate, a stale job brought back, a lease
 * taken again) does nothing, so a retry or a re-enqueue never sends twice what was acknowledged.
 *
 * - PENDING, endpoint active: one attempt. A failure schedules the next one (`run.retry`); the 7th
 *   failure makes the row FAILED (`run.giveUp`).
 * - PENDING, endpoint inactive: PAUSED, without using an attempt.
 * - FAILED: only a retry from Bull Board runs such a job; it makes one more attempt.
 *
 * Before the attempt, an ordered endpoint's delivery is parked while an earlier one about the same
 * object is open (ordering.ts: the end of that one wakes it), and a throttled endpoint's delivery
 * takes a slot (throttle.ts, `run.throttle`): when it must wait, it waits for its slot in the
 * throttled queue, without using an attempt and without holding a worker slot meanwhile.
 */
export async function runDelivery(s: Services, run: DeliveryRun): Promise<string> {
  const id = run.deliveryId;
  // Twice at most: a pause can lose a race with a re-enable, and the delivery must then go out.
  for (let pass = 0; pass < 2; pass++) {
    const d = await batchers(s).load.push(id);
    if (!d) return 'missing';
    if (d === EVENT_EXPIRED) {
      // Resent on the last days of its event, or paused until after them: nothing left to send.
      const row = (await findDeliveries(s.sql, [id]))[0];
      if ((await cancelDelivery(s.sql, id)) && row?.object_id) await wake(s, { endpoint_id: row.endpoint_id, object_id: row.object_id });
      return 'cancelled (its event is past retention)';
    }
    if (d.status !== 'PENDING' && d.status !== 'FAILED') return `skipped (${d.status})`;
    if (d.url === null) {
      if (d.status === 'FAILED') return 'skipped (endpoint deleted)';
      await cancelDelivery(s.sql, id);
      return 'cancelled (endpoint deleted)';
    }
    if (!d.is_active) {
      if (d.status === 'FAILED') return 'skipped (endpoint inactive)';
      if (await pauseIfInactive(s.sql, id, d.endpoint_id)) return 'paused';
      continue;
    }
    if (d.object_id !== null && d.status === 'PENDING') {
      const blocker = await parkBehindEarlier(s.sql, { id: d.id, endpoint_id: d.endpoint_id, event_id: d.event_id, object_id: d.object_id });
      if (blocker) return `parked behind ${blocker} (ordered endpoint)`;
    }
    if (d.rate_limit !== null) {
      const waiting = await run.throttle(d.endpoint_id, d.rate_limit);
      if (waiting) return waiting;
    }
    return attempt(s, run, d);
  }
  throw new Error(`delivery ${id}: endpoint toggled while pausing; retrying`);
}

/**
 * Waits for the endpoint's rate: null when this delivery may go now. Otherwise the delivery takes
 * the slot it was given, without using an attempt and without holding a worker meanwhile: a job of
 * the delivery queue hands it to the throttled queue, delayed until then (and answers what it did);
 * a job of the throttled queue moves itself back to delayed and throws BullMQ's DelayedError. If
 * Redis cannot be asked, nothing is sent (the rate is never exceeded): the job fails and BullMQ runs
 * it again later, the delivery's row untouched.
 */
async function throttle(s: Services, job: Job<DeliverJobData>, token: string, endpointId: string, rate: number): Promise<string | null> {
  const wait = await takeSlot(s.redis, s.config.redisPrefix, endpointId, rate, job.data.slot === true);
  if (wait <= 0) return null;
  s.metrics.webhookThrottled.inc();
  if (job.queueName !== QUEUE_NAMES.webhookThrottled) {
    await deliveryJobs(s).addThrottled(job.data.deliveryId, wait);
    return `throttled: waits ${wait} ms for its slot in ${QUEUE_NAMES.webhookThrottled}`;
  }
  await job.moveToDelayed(Date.now() + wait, token);
  throw new DelayedError(`throttled: the endpoint's slot is in ${wait} ms`);
}

/** After an ordered delivery ended for good: the next one about its object is woken and enqueued. */
async function wake(s: Services, d: { endpoint_id: string; object_id: string }): Promise<void> {
  const next = await wakeNext(s.sql, d);
  // Lost (Redis away): the row is due, so the reconcile pass enqueues it.
  if (next) await deliveryJobs(s).revive([next]).catch((err: unknown) => s.log.warn({ err, deliveryId: next }, 'ordered delivery woken but not enqueued; the reconcile pass will'));
}

async function attempt(s: Services, run: DeliveryRun, d: AttemptContext): Promise<string> {
  const n = d.attempt_count + 1;
  // The stored text of the event's data, not parsed and serialised again: the same bytes (presentEventJson).
  const body = presentEventJson({ id: d.event_id, livemode: d.livemode, type: d.type, api_version: d.api_version, created_at: d.event_created_at }, d.data_json);
  const signature = signatureHeader(signingSecrets({ ...d, secret: d.secret! }), body, nowUnix());
  const result = await send(
    { url: d.url!, eventId: d.event_id, deliveryId: d.id, body, signature, headers: d.headers ?? {} },
    s.config.webhookTimeoutMs,
    // The endpoint's mode decides how local its target may be: a live endpoint never may.
    targetPolicy(s.config, d.livemode),
  );
  run.sent?.();
  // If this attempt fails, the next one waits as many milliseconds.
  const { status, action } = await batchers(s).record.push({ id: d.id, endpointId: d.endpoint_id, n, result, retryDelayMs: run.retryDelayMs(n) });
  if (status === null) return `attempt ${n} was recorded by another run`;
  // The attempt is recorded whatever happens here: a failure to warn or disable is tried again at the next failed attempt.
  if (action) await actOnHealth(s, d.endpoint_id, action).catch((err: unknown) => s.log.error({ err, endpointId: d.endpoint_id, action }, 'endpoint health action failed; the next failed attempt tries again'));
  countAttempt(s, d, n, result.ok, result.statusCode, status);
  if (d.object_id !== null && (status === 'SUCCEEDED' || status === 'FAILED')) await wake(s, { endpoint_id: d.endpoint_id, object_id: d.object_id });
  if (result.ok) return `attempt ${n} succeeded (${result.statusCode})`;
  const why = `attempt ${n} of delivery ${d.id} failed: ${result.error}`;
  if (status === 'PENDING') return run.retry(why, n);
  if (status === 'FAILED') return run.giveUp(why);
  return `${why}; delivery is ${status}, not retried`;
}

/**
 * The metrics of one attempt this run recorded: the attempt, and a delivery that it ended (its
 * first 2xx, with the time since the event, or attempt 7 failing).
 */
function countAttempt(s: Services, d: AttemptContext, n: number, ok: boolean, statusCode: number | null, status: DeliveryStatus): void {
  const m = s.metrics;
  m.webhookAttempt(ok, statusCode);
  if (ok && status === 'SUCCEEDED') {
    m.webhookDeliveries.inc({ outcome: 'succeeded' });
    m.webhookFirstSuccess.observe(Math.max(0, Date.now() - d.event_created_at.getTime()) / 1000);
  } else if (!ok && status === 'FAILED' && n === MAX_ATTEMPTS) m.webhookDeliveries.inc({ outcome: 'failed' });
}

const RECONCILE_BATCH = 500;

/**
 * The repair pass of deliveries (run by the reconcile worker): every PENDING delivery that is due
 * and has no live job gets one again (Redis flushed, a job failed by BullMQ's stall limit, an
 * after-commit enqueue that did not happen). A job found finished is replaced only if its row is
 * still PENDING after that finding. Returns how many were enqueued again.
 */
export async function reconcileDeliveries(s: Services): Promise<number> {
  const jobs = deliveryJobs(s);
  // Parked deliveries of ordered endpoints whose wake was lost: due again, so enqueued below.
  await wakeOrphans(s.sql);
  let after = '';
  let revived = 0;
  for (;;) {
    const due = await duePending(s.sql, after, RECONCILE_BATCH);
    if (due.length === 0) break;
    const ids = due.map((d) => d.id);
    revived += (await jobs.revive(ids, { stillPending: (dead) => stillPending(s.sql, dead), routes: throttleRoutes(due, due.map((d) => ({ endpointId: d.endpoint_id, rateLimit: d.rate_limit }))) })).length;
    after = ids[ids.length - 1]!;
    if (ids.length < RECONCILE_BATCH) break;
  }
  return revived;
}
