import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { StartupError } from '../lib/dependencies.ts';

const HINT = 'start it (for example `redis-server --daemonize yes`) or set REDIS_URL';
const CLUSTER_HINT = 'check that its nodes are up and that REDIS_CLUSTER_NODES names some of them';

/** A Redis Cluster to connect to (REDIS_CLUSTER_NODES): some of its nodes (the client finds the rest), and how to log in. */
export interface RedisClusterTarget {
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  tls: boolean;
}

/** The shared connection of a process: one Redis, or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;

/** How long the start-up waits for Redis (or for a cluster to be ready) before it gives up. */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * The longest a command of the shared (producer) connection may take before it is given up. Redis
 * answers in well under a millisecond; this only bounds a Redis that accepts the connection but
 * does not answer. Blocking worker connections (`workerConnection`) have no such bound.
 */
export const PRODUCER_COMMAND_TIMEOUT_MS = 1000;

/**
 * Connects the shared connection of a process (queues, /readyz, rate limits), failing fast with
 * one clear line when Redis does not answer at start-up.
 *
 * Once started it fails fast too: while Redis is unreachable a command is refused at once instead
 * of queueing until Redis returns (`enableOfflineQueue: false`), and a command already sent when
 * the connection drops is given up after one retry or PRODUCER_COMMAND_TIMEOUT_MS. Requests only
 * enqueue work whose promise is already in Postgres (the reconciler re-enqueues it), so they never
 * wait on Redis. ioredis keeps reconnecting on its own.
 */
export async function connectRedis(url: string, cluster: RedisClusterTarget | null = null): Promise<RedisClient> {
  const redis: RedisClient = cluster
    ? new Cluster(cluster.nodes, clusterOptions(cluster))
    : new Redis(url, {
        lazyConnect: true,
        connectTimeout: CONNECT_TIMEOUT_MS,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS,
      });
  redis.on('error', () => {}); // reconnects on its own; readiness shows in /readyz
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    const why = (err as { code?: string }).code ?? (err as Error).message;
    if (cluster) {
      const where = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(', ');
      throw new StartupError(`the Redis Cluster is not reachable at ${where} (${why}): ${CLUSTER_HINT}.`);
    }
    const u = new URL(url);
    throw new StartupError(`Redis is not reachable at ${u.hostname}:${u.port || 6379} (${why}): ${HINT}.`);
  }
  return redis;
}

/**
 * The shared connection to a Redis Cluster, failing fast as the single-node one does: no offline
 * queue (a command for a slot whose master is away fails after ioredis's own retries over the
 * failover, about 2 s, instead of waiting), one retry per command on each node, the same command
 * timeout. ioredis follows MOVED and ASK redirections and refreshes the slot map after a failover.
 */
function clusterOptions(c: RedisClusterTarget): ClusterOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    // Ready once the slot map is read, without waiting for `cluster_state:ok`. With the check, a
    // connect() made while the cluster fails over never settles (ioredis 6.0: the check fails, the
    // client reconnects with a new connect() and the first promise is left pending), and BullMQ's
    // worker awaits exactly that when its blocking connection drops: the worker stopped taking jobs
    // for good after a master was killed (test/ops/redis-cluster.test.ts). Commands sent while the
    // cluster is down are retried by ioredis on CLUSTERDOWN, then fail, as with the check.
    enableReadyCheck: false,
    // While no node answers: attempts 0.1 s apart at first, at most 2 s apart (ioredis's default).
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
    // Managed clusters with TLS (ElastiCache, MemoryDB) announce host names their certificates carry.
    ...(c.tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
    redisOptions: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS,
      ...(c.username ? { username: c.username } : {}),
      ...(c.password ? { password: c.password } : {}),
      ...(c.tls ? { tls: {} } : {}),
    },
  };
}

/**
 * A connection for a BullMQ worker: its commands wait for Redis to come back rather than fail
 * (`maxRetriesPerRequest: null`, offline queue on, no command timeout), which BullMQ requires for
 * the blocking commands a worker sends. On a cluster, the same holds on the connection to each node.
 */
export function workerConnection(shared: RedisClient): RedisClient {
  const redis =
    shared instanceof Cluster
      ? shared.duplicate([], { enableOfflineQueue: true, redisOptions: { ...shared.options.redisOptions, maxRetriesPerRequest: null, commandTimeout: undefined } })
      : endsWhileReconnecting(shared.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined }));
  redis.on('error', () => {}); // the worker's own 'error' event logs what matters
  return redis;
}

type ClientInternals = { manuallyClosing: boolean; setStatus(status: string): void; flushQueue(err: Error): void };

/**
 * ioredis 6.0 ends nothing when disconnect() comes while the client waits to reconnect (Redis
 * down, or just back): the timer is cleared but no 'end' is emitted, and BullMQ's Worker.close(),
 * which waits for 'end' on its blocking connection, then hangs for ever. This ends the client as a
 * close would. Upstream: redis/ioredis issue 1247; the same fix is proposed in pull request 2169
 * (open). Drop it once a release has the fix. BullMQ makes a worker's blocking connection with
 * duplicate(), so duplicates get it too.
 */
function endsWhileReconnecting(client: Redis): Redis {
  const disconnect = client.disconnect.bind(client);
  const duplicate = client.duplicate.bind(client);
  client.disconnect = (reconnect = false) => {
    const waiting = !reconnect && client.status === 'reconnecting';
    disconnect(reconnect);
    if (waiting && client.status === 'reconnecting') {
      const self = client as unknown as ClientInternals;
      self.manuallyClosing = false;
      self.setStatus('end');
      self.flushQueue(new Error('Connection is closed.'));
    }
  };
  client.duplicate = ((override) => endsWhileReconnecting(duplicate(override))) as Redis['duplicate'];
  return client;
}
