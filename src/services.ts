import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { connect, ensureDatabase, type Sql } from './db/sql.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { connectRedis } from './queue/redis.ts';
import { Queues } from './queue/queues.ts';

/** What every part of the service is handed: built once here (the composition root), passed explicitly. */
export interface Services {
  config: Config;
  log: Logger;
  sql: Sql;
  redis: Redis;
  queues: Queues;
}

export async function createServices(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Services> {
  await ensureDatabase(config.databaseUrl);
  const redis = await connectRedis(config.redisUrl);
  const sql = connect(config.databaseUrl, config.dbPoolMax);
  const queues = new Queues(redis, config.redisPrefix);
  return { config, log, sql, redis, queues };
}

export async function closeServices(s: Services): Promise<void> {
  await s.queues.close();
  await s.sql.end({ timeout: 5 });
  await s.redis.quit().catch(() => s.redis.disconnect());
}
