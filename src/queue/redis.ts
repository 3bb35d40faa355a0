import { Redis } from 'ioredis';
import { StartupError } from '../lib/dependencies.ts';

const HINT = 'start it (for example `redis-server --daemonize yes`) or set REDIS_URL';

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
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5000,
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
    const u = new URL(url);
    const why = (err as { code?: string }).code ?? (err as Error).message;
    throw new StartupError(`Redis is not reachable at ${u.hostname}:${u.port || 6379} (${why}): ${HINT}.`);
  }
  return redis;
}

/**
 * A connection for a BullMQ worker: its commands wait for Redis to come back rather than fail
 * (`maxRetriesPerRequest: null`, offline queue on, no command timeout), which BullMQ requires for
 * the blocking commands a worker sends.
 */
export function workerConnection(shared: Redis): Redis {
  const redis = endsWhileReconnecting(shared.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined }));
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
