import { UnrecoverableError, type Job } from 'bullmq';
import { presentEvent } from '../events/presenter.ts';
import { nowUnix } from '../lib/time.ts';
import type { Services } from '../services.ts';
import type { Sql } from '../db/sql.ts';
import { Batcher } from './batcher.ts';
import {
  cancelDelivery,
  duePending,
  loadAttemptContexts,
  pauseIfInactive,
  recordAttempts,
  stillPending,
  type AttemptContext,
  type AttemptRecord,
  type DeliveryStatus,
} from './deliveries.ts';
import { deliveryJobs, type DeliverJobData } from './jobs.ts';
import { send } from './sender.ts';
import { signatureHeader } from './signing.ts';
import { signingSecrets } from './store.ts';
import { targetPolicy } from './url.ts';

interface Batchers {
  load: Batcher<string, AttemptContext | undefined>;
  record: Batcher<AttemptRecord, DeliveryStatus | null>;
}
const batchersByPool = new WeakMap<Sql, Batchers>();

/** The deliveries running at the same moment share their reads and writes (one statement each). */
function batchers(sql: Sql): Batchers {
  let b = batchersByPool.get(sql);
  if (!b) {
    b = { load: new Batcher((ids) => loadAttemptContexts(sql, ids)), record: new Batcher((records) => recordAttempts(sql, records)) };
    batchersByPool.set(sql, b);
  }
  return b;
}

/**
 * One run of a delivery job. The delivery row decides what happens, never the job alone: a job that
 * runs for a delivery already SUCCEEDED or CANCELLED (a duplicate, a stale job brought back) does
 * nothing, so a retry or a re-enqueue never sends twice what was acknowledged.
 *
 * - PENDING, endpoint active: one attempt. A failure throws, so that BullMQ schedules the next one
 *   with its exponential backoff; the 7th failure makes the row FAILED and ends the job.
 * - PENDING, endpoint inactive: PAUSED, and the job completes without using an attempt.
 * - FAILED: only a retry from Bull Board runs such a job; it makes one more attempt.
 */
export async function runDelivery(s: Services, job: Job<DeliverJobData>): Promise<string> {
  const id = job.data.deliveryId;
  // Twice at most: a pause can lose a race with a re-enable, and the delivery must then go out.
  for (let pass = 0; pass < 2; pass++) {
    const d = await batchers(s.sql).load.push(id);
    if (!d) return 'missing';
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
    return attempt(s, job, d);
  }
  throw new Error(`delivery ${id}: endpoint toggled while pausing; retrying`);
}

async function attempt(s: Services, job: Job<DeliverJobData>, d: AttemptContext): Promise<string> {
  const n = d.attempt_count + 1;
  const body = JSON.stringify(
    presentEvent({ id: d.event_id, livemode: d.livemode, type: d.type, api_version: d.api_version, data: d.data, created_at: d.event_created_at }),
  );
  const signature = signatureHeader(signingSecrets({ ...d, secret: d.secret! }), body, nowUnix());
  const result = await send(
    { url: d.url!, eventId: d.event_id, deliveryId: d.id, body, signature },
    s.config.webhookTimeoutMs,
    // The endpoint's mode decides how local its target may be: a live endpoint never may.
    targetPolicy(s.config, d.livemode),
  );
  // If this attempt fails, BullMQ waits as many milliseconds before the next one.
  const retryDelay = deliveryJobs(s).retryDelayMs(job.attemptsMade + 1);
  const status = await batchers(s.sql).record.push({ id: d.id, n, result, retryDelayMs: retryDelay });
  if (status === null) return `attempt ${n} was recorded by another run`;
  if (result.ok) return `attempt ${n} succeeded (${result.statusCode})`;
  const why = `attempt ${n} of delivery ${d.id} failed: ${result.error}`;
  if (status === 'PENDING') throw new Error(why);
  if (status === 'FAILED') throw new UnrecoverableError(`${why}; no attempts left`);
  return `${why}; delivery is ${status}, not retried`;
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
  let after = '';
  let revived = 0;
  for (;;) {
    const ids = await duePending(s.sql, after, RECONCILE_BATCH);
    if (ids.length === 0) break;
    revived += (await jobs.revive(ids, { stillPending: (dead) => stillPending(s.sql, dead) })).length;
    after = ids[ids.length - 1]!;
    if (ids.length < RECONCILE_BATCH) break;
  }
  return revived;
}
