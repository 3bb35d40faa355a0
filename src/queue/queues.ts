import { Queue, type JobsOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import type { RedisClient } from './redis.ts';

/** Every queue of the service. Workers and producers name queues only through this table. */
export const QUEUE_NAMES = {
  maintenance: 'maintenance',
  sessionExpiry: 'session-expiry',
  webhookDelivery: 'webhook-delivery',
  /** Deliveries to throttled endpoints waiting for their slot (src/webhooks/throttle.ts): apart, so that they never queue behind other endpoints' backlogs. */
  webhookThrottled: 'webhook-throttled',
  linkCounters: 'link-counters',
  processor: 'processor',
  reconcile: 'reconcile',
  disputes: 'disputes',
  refunds: 'refunds',
  email: 'email',
  invoices: 'invoices',
  installments: 'installments',
  exports: 'exports',
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** Retry and retention defaults shared by every job (a queue may override them per job). */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * The BullMQ prefix of a queue's keys. On one Redis it is the deployment's prefix (REDIS_PREFIX), as
 * it always was. On a Redis Cluster it also carries the queue's own hash tag, `payments:{email}`:
 * BullMQ's scripts touch several keys of a queue at once, which a cluster allows only within one
 * slot, and a tag per queue (rather than one for the deployment) spreads the queues over the shards.
 */
export function queuePrefix(prefix: string, name: QueueName, cluster: boolean): string {
  return cluster ? `${prefix}:{${name}}` : prefix;
}

/** Lazily opened BullMQ queues on one shared connection, under the deployment's key prefix. */
export class Queues {
  private readonly open = new Map<QueueName, Queue>();
  readonly redis: RedisClient;
  readonly prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  /** The key prefix of queue `name` (workers must use the same as the queue). */
  prefixOf(name: QueueName): string {
    return queuePrefix(this.prefix, name, this.redis instanceof Cluster);
  }

  get(name: QueueName): Queue {
    let q = this.open.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.redis, prefix: this.prefixOf(name), defaultJobOptions: DEFAULT_JOB_OPTIONS });
      q.on('error', () => {}); // connection errors surface through /readyz and job retries
      this.open.set(name, q);
    }
    return q;
  }

  /**
   * Opens every queue and waits for each to be ready: called at start-up, while Redis answers.
   * BullMQ readies a queue (reading the server version) when it is first opened; a queue first
   * opened during an outage would wait for Redis, or fail for good, instead of failing fast.
   */
  async openAll(): Promise<void> {
    await Promise.all(this.all().map((q) => q.waitUntilReady()));
  }

  all(): Queue[] {
    return Object.values(QUEUE_NAMES).map((n) => this.get(n));
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((q) => q.close()));
    this.open.clear();
  }
}
