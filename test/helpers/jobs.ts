import { QueueEvents, type Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { workerConnection, type RedisClient } from '../../src/queue/redis.ts';

export type JobOutcome = { state: 'completed'; returnvalue: unknown } | { state: 'failed'; failedReason: string };

/**
 * Records how the jobs of `queue` end, from its event stream, starting now. A job added with the
 * production options is gone from Redis once it completes (its retention removes it), so its
 * return value is read from the `completed` event rather than from the job. Call before adding
 * the job, with the service's Redis client; `close()` in a finally.
 */
export async function watchJobs(queue: Queue, redis: RedisClient) {
  // Read from the stream's current end: events of the job are kept even if they come before the
  // first blocking read.
  const [last] = await redis.xrevrange(queue.keys.events!, '+', '-', 'COUNT', 1);
  // A blocking reader: no command timeout (the service's client has one), and short blocks so that
  // close() returns quickly.
  const connection = redis instanceof Redis ? redis.duplicate({ maxRetriesPerRequest: null, commandTimeout: undefined, lazyConnect: false }) : workerConnection(redis);
  const events = new QueueEvents(queue.name, { connection, prefix: queue.opts.prefix, lastEventId: last?.[0] ?? '0-0', blockingTimeout: 500 });
  const seen = new Map<string, JobOutcome>();
  events.on('completed', ({ jobId, returnvalue }) => seen.set(jobId, { state: 'completed', returnvalue }));
  events.on('failed', ({ jobId, failedReason }) => seen.set(jobId, { state: 'failed', failedReason }));
  await events.waitUntilReady();
  return {
    /** How job `jobId` ended; fails when it has not ended within `timeoutMs`. */
    async outcome(jobId: string, timeoutMs = 15_000): Promise<JobOutcome> {
      const end = Date.now() + timeoutMs;
      while (!seen.has(jobId)) {
        if (Date.now() > end) throw new Error(`job ${jobId} did not end within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return seen.get(jobId)!;
    },
    async close() {
      await events.close();
      connection.disconnect();
    },
  };
}
