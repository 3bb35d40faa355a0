import type { Job, WorkerOptions } from 'bullmq';
import type { QueueName } from '../src/queue/queues.ts';
import type { Services } from '../src/services.ts';

/** One worker: the queue it serves, how many jobs at once, and an idempotent handler. */
export interface WorkerDefinition<Data = unknown> {
  queue: QueueName;
  concurrency: number;
  /** `token`: the worker's lock on the job, for a handler that moves its job itself (to delayed, say). */
  process(job: Job<Data>, s: Services, token?: string): Promise<unknown>;
  /** Repeating jobs this worker owns: (scheduler id, interval, job name). */
  schedules?: (s: Services) => Array<{ id: string; everyMs: number; name: string }>;
  /** A loop this worker runs beside its queue in every worker process (started and stopped with the workers). */
  background?: (s: Services) => { stop(): Promise<void> };
  /** Retention applied by the worker to jobs that carry none of their own (keeps stored job options small). */
  keep?: Pick<WorkerOptions, 'removeOnComplete' | 'removeOnFail'>;
}

/**
 * A repair pass over Postgres, the source of truth: each one finds work that is due but has no
 * live job (Redis flushed, a worker killed) and enqueues it again, and returns how many. Jobs have
 * deterministic ids, so enqueueing what is already queued is a no-op.
 */
export interface Reconciler {
  name: string;
  run(s: Services): Promise<number>;
}
