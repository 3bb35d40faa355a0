import type { Job, WorkerOptions } from 'bullmq';
import type { QueueName } from '../src/queue/queues.ts';
import type { Services } from '../src/services.ts';

/** One worker: the queue it serves, how many jobs at once, and an idempotent handler. */
export interface WorkerDefinition<Data = unknown> {
  queue: QueueName;
  concurrency: number;
  process(job: Job<Data>, s: Services): Promise<unknown>;
  /** Repeating jobs this worker owns: (scheduler id, interval, job name). */
  schedules?: (s: Services) => Array<{ id: string; everyMs: number; name: string }>;
  /** Retention applied by the worker to jobs that carry none of their own (keeps stored job options small). */
  keep?: Pick<WorkerOptions, 'removeOnComplete' | 'removeOnFail'>;
}
