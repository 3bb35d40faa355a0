import { Redis } from 'ioredis';
import { StartupError } from '../db/sql.ts';

const HINT = 'start it (for example `redis-server --daemonize yes`) or set REDIS_URL';

/** Connects to Redis, failing fast with one clear line when it does not answer. */
export async function connectRedis(url: string): Promise<Redis> {
  // maxRetriesPerRequest: null is what BullMQ workers need on a shared connection.
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true, connectTimeout: 5000 });
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
