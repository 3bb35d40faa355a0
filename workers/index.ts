import { DelayedError, Worker, type Job } from 'bullmq';
import type { Logger } from '../src/lib/logger.ts';
import { workerConnection, type RedisClient } from '../src/queue/redis.ts';
import type { Services } from '../src/services.ts';
import { linkCountersWorker } from './link-counters.ts';
import { maintenanceWorker } from './maintenance.ts';
import { processorWorker } from './processor.ts';
import { reconcileWorker } from './reconcile.ts';
import { refundsWorker } from './refunds.ts';
import { disputesWorker } from './disputes.ts';
import { emailWorker } from './email.ts';
import { invoicesWorker } from './invoices.ts';
import { installmentsWorker } from './installments.ts';
import { exportsWorker } from './exports.ts';
import { ScheduleKeeper } from './schedules.ts';
import { sessionExpiryWorker } from './session-expiry.ts';
import type { WorkerDefinition } from './types.ts';
import { webhookDeliveryWorker, webhookThrottledWorker } from './webhook-delivery.ts';

/** Every worker of the service; `npm run start:worker` and `npm start` run them all. */
export const WORKERS: WorkerDefinition<never>[] = [maintenanceWorker, reconcileWorker, linkCountersWorker, webhookDeliveryWorker, webhookThrottledWorker, sessionExpiryWorker, processorWorker, refundsWorker, disputesWorker, emailWorker, invoicesWorker, installmentsWorker, exportsWorker];

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

export async function startWorkers(s: Services, defs: WorkerDefinition<never>[] = WORKERS): Promise<RunningWorkers> {
  const workers: Worker[] = [];
  const connections: RedisClient[] = [];
  for (const def of defs) {
    const log = s.log.child({ queue: def.queue });
    // Its own connection that waits out a Redis outage; the shared one fails fast (src/queue/redis.ts).
    const connection = workerConnection(s.redis);
    connections.push(connection);
    const worker = new Worker(def.queue, timed(def, s), {
      connection,
      prefix: s.queues.prefixOf(def.queue),
      concurrency: def.concurrency,
      // A worker that dies mid-job leaves a lock; once it expires, the stall check hands the job to another worker.
      lockDuration: s.config.workerLockMs,
      stalledInterval: s.config.workerLockMs,
      ...def.keep,
    });
    worker.on('failed', (job, err) => log.warn({ jobId: job?.id, name: job?.name, attempt: job?.attemptsMade, err: err.message }, 'job failed'));
    worker.on('error', quietRepeats((err) => log.error({ err }, 'worker error')));
    workers.push(worker);
  }
  // This process's scrapes read the queues' depths and the delivery backlog (src/metrics/scrape.ts).
  s.metrics.runsWorkers = true;
  const loops = defs.flatMap((def) => (def.background ? [def.background(s)] : []));
  // Schedules live only in Redis: the keeper creates them now and re-creates any that Redis loses.
  const keeper = new ScheduleKeeper(s, defs.flatMap((def) => (def.schedules?.(s) ?? []).map((sch) => ({ queue: def.queue, ...sch }))));
  await keeper.start();
  return {
    workers,
    // close() lets the jobs in flight finish before it resolves.
    close: async () => {
      keeper.stop();
      await Promise.all(loops.map((l) => l.stop()));
      s.metrics.runsWorkers = false;
      await Promise.all(workers.map((w, i) => closeWorker(w, connections[i]!, s.log)));
    },
  };
}

/** The worker's handler, each run observed in queue_job_duration_seconds by its outcome. */
function timed(def: WorkerDefinition<never>, s: Services) {
  const completed = s.metrics.jobDuration.labels({ queue: def.queue, outcome: 'completed' });
  const failed = s.metrics.jobDuration.labels({ queue: def.queue, outcome: 'failed' });
  return async (job: Job, token?: string) => {
    const t0 = performance.now();
    try {
      const answer = await def.process(job as never, s, token);
      completed.observe((performance.now() - t0) / 1000);
      return answer;
    } catch (err) {
      // A job that moved itself to delayed (a throttled delivery) has not failed.
      if (!(err instanceof DelayedError)) failed.observe((performance.now() - t0) / 1000);
      throw err;
    }
  };
}

/** The same error again within this time is not logged again (BullMQ reports every reconnect attempt). */
const REPEAT_QUIET_MS = 30_000;

function quietRepeats(logError: (err: Error) => void): (err: Error) => void {
  let last = '';
  let at = 0;
  return (err) => {
    if (err.message === last && Date.now() - at < REPEAT_QUIET_MS) return;
    last = err.message;
    at = Date.now();
    logError(err);
  };
}

/** How long a closing worker waits for an unreachable Redis before it stops waiting for its jobs. */
const UNREACHABLE_GRACE_MS = 2000;

/**
 * Closes one worker: its jobs in flight finish and are recorded. While Redis is unreachable their
 * outcome cannot be recorded, and BullMQ would wait for Redis for ever; after UNREACHABLE_GRACE_MS
 * the connection is dropped instead, and those jobs run again once their lock expires (every
 * handler is idempotent, as for a worker that is killed).
 */
async function closeWorker(worker: Worker, connection: RedisClient, log: Logger): Promise<void> {
  const closing = worker.close();
  let done = false;
  void closing.finally(() => (done = true));
  let unreachableSince: number | undefined;
  while (!done) {
    await new Promise((r) => setTimeout(r, 100));
    if (connection.status === 'ready') unreachableSince = undefined;
    else if (Date.now() - (unreachableSince ??= Date.now()) >= UNREACHABLE_GRACE_MS) {
      log.warn({ queue: worker.name }, 'Redis is unreachable: worker closed without recording its jobs in flight; they run again once their lock expires');
      connection.disconnect();
      break;
    }
  }
  await closing;
  connection.disconnect(); // BullMQ leaves a connection it was given open
}
