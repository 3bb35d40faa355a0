import type { Job } from 'bullmq';
import type { QueueName } from '../src/queue/queues.ts';
import type { Services } from '../src/services.ts';

/** One worker: the queue it serves, how many jobs at once, and an idempotent handler. */
export interface WorkerDefinition<Data = unknown> {
  queue: QueueName;
  concurrency: number;
  process(job: Job<Data>, s: Services): Promise<unknown>;
  /** Repeating jobs this worker owns: (scheduler id, interval, job name). */
  schedules?: (s: Services) => Array<{ id: string; everyMs: number; name: string }>;
}
