import cluster from 'node:cluster';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { looserRoleBounds } from './db/bounds.ts';
import { migrate, migrateRoleBounds, pendingMigrations } from './db/migrate.ts';
import { autovacuumOff, AUTOVACUUM_OFF_WARNING } from './db/settings.ts';
import { isDatabaseUnavailable, StartupError } from './lib/dependencies.ts';
import { createLogger } from './lib/logger.ts';
import { forkWebProcesses, LISTEN_FAILED, type WebForks } from './ops/cluster.ts';
import { listenGracefully, type DrainPlan, type GracefulServer } from './ops/http-server.ts';
import { resolveLocalServices, type LocalServices } from './ops/local-services.ts';
import { answerMetricsRequests } from './metrics/cluster.ts';
import { listenMetrics, metricsServing, type MetricsServer } from './metrics/server.ts';
import { ensurePartitions } from './retention/service.ts';
import { closeServices, createServices } from './compose.ts';
import type { Services } from './services.ts';
import { localTargetsOn } from './webhooks/url.ts';
import { startWorkers, type RunningWorkers } from '../workers/index.ts';

export interface RunOptions {
  web: boolean;
  workers: boolean;
  migrate: boolean;
  /**
   * `npm start` only: without DATABASE_URL / REDIS_URL and with nothing on the local ports, run an
   * embedded PostgreSQL and the machine's redis-server (outside production; src/ops/local-services.ts),
   * stopped with the process.
   */
  embed?: boolean;
}

/** Starts the web process, the workers, or both, and stops them cleanly on SIGTERM or SIGINT. */
export async function run(opts: RunOptions): Promise<void> {
  // A forked web process (WEB_CONCURRENCY > 1) only serves HTTP: its primary migrated and runs the workers.
  if (cluster.isWorker) opts = { web: true, workers: false, migrate: false };
  let s: Services;
  let local: LocalServices | undefined;
  let serving: ReturnType<typeof metricsServing>;
  try {
    let config = loadConfig();
    const startLog = createLogger(config.logLevel, undefined, config.logFlushMs);
    if (opts.embed && cluster.isPrimary) {
      local = await resolveLocalServices({ ...config, role: 'service', say: (line) => startLog.info(line) });
      config = { ...config, databaseUrl: local.databaseUrl, redisUrl: local.redisUrl, localSetup: config.localSetup || local.embedded };
    }
    s = await createServices(config, startLog);
    // A promise nobody awaited that fails because Postgres is away must not end the process
    // (docs/operations.md, Postgres); any other unhandled rejection still does, as Node's default.
    const log = s.log;
    process.on('unhandledRejection', (reason) => {
      if (!isDatabaseUnavailable(reason)) throw reason;
      log.error({ err: reason }, 'unhandled rejection while Postgres is unavailable');
    });
    serving = metricsServing(s.config.metrics, { web: opts.web, forked: cluster.isWorker, webConcurrency: s.config.webConcurrency });
    if (opts.migrate) {
      const applied = await migrate(s.sql);
      if (applied.length) s.log.info({ applied }, 'migrations applied');
      if (s.config.dbSession.transactionPooling) await migrateRoleBounds(s.sql, s.config.dbTimeouts);
    } else {
      const pending = await pendingMigrations(s.sql);
      if (pending.length) throw new StartupError(`the database schema is behind (${pending.join(', ')} pending): run \`npm run migrate\` first.`);
    }
    if (s.config.dbSession.transactionPooling) {
      // Statements outside a transaction are bounded only by the role's defaults (src/db/bounds.ts).
      const looser = await looserRoleBounds(s.sql, s.config.dbTimeouts);
      if (looser.length) s.log.warn({ looser }, 'behind the transaction pooler, statements outside a transaction run with looser bounds than DB_*_TIMEOUT_MS: run `npm run migrate`, then let PgBouncer open new server connections (RECONNECT)');
    }
    // The partitions ahead, whether or not the retention job has run lately (src/retention/); not
    // fatal: the ones made earlier reach RETENTION_PARTITIONS_AHEAD_DAYS ahead, and the job retries.
    if (cluster.isPrimary) {
      await ensurePartitions(s, new Date()).catch((err: unknown) => log.warn({ err }, 'start-up: making the partitions ahead failed; the retention job tries again'));
      if (await autovacuumOff(s.sql)) s.log.warn(AUTOVACUUM_OFF_WARNING);
    }
  } catch (err) {
    const e = isDatabaseUnavailable(err)
      ? new StartupError(`PostgreSQL went away during start-up (${(err as { code: string }).code}): check that it is running, then start again.`)
      : (err as Error);
    process.stderr.write(`error: ${e instanceof StartupError || e.message.startsWith('invalid configuration') ? e.message : String(e.stack)}\n`);
    await local?.stop().catch(() => {});
    process.exit(1);
  }

  if (s.config.webhookAllowInsecureTargets) {
    s.log.warn('WEBHOOK_ALLOW_INSECURE_TARGETS=true: webhook URLs may be plain http and private addresses. Use it for development and tests only.');
  } else if (localTargetsOn(s.config)) {
    // Said once, so that whoever runs a shared deployment sees that test keys may point webhooks
    // inside its network: a warning where the service is not clearly local (the setting was turned on on purpose).
    const line = 'test-mode webhook endpoints may be local (http, localhost, loopback and private addresses: WEBHOOK_TEST_LOCAL_TARGETS); live-mode endpoints must be public https';
    if (s.config.localSetup) s.log.info(line);
    else s.log.warn(`${line}; this service is not clearly local (PUBLIC_BASE_URL is not loopback), so the answers of private targets are kept from the API and dashboard`);
  }

  // Live mode never simulates (issue 12): without live Stripe keys it takes no payment at all.
  if (!s.processors.live) s.log.warn('live payments are off: STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET are not set; live checkout pages refuse payment and GET /v1/account shows charges_enabled false');
  else s.log.info({ test: s.processors.test.name }, 'live payments are on (Stripe)');

  let web: GracefulServer | undefined;
  let forks: WebForks | undefined;
  let workers: RunningWorkers | undefined;
  let metricsServer: MetricsServer | undefined;
  let stopping = false;
  const stop = async (reason: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    const timeoutMs = s.config.shutdownTimeoutMs;
    s.log.info({ signal: reason }, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => {
      s.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    force.unref();
    const plan = drainPlan(timeoutMs, web?.server.keepAliveTimeout ?? 0);
    await Promise.all([
      web?.drain(plan).then(({ cut }) => {
        if (cut) s.log.warn({ cut }, 'shutdown: connections closed before their answer');
      }),
      forks?.stop(plan.forceAfterMs + (timeoutMs - plan.forceAfterMs) / 2),
      workers && releaseAfter(workers.close(), plan.forceAfterMs, () =>
        s.log.warn('shutdown: jobs still running were left; another worker runs them again once their lock expires (WORKER_LOCK_MS)'),
      ),
    ]);
    await metricsServer?.close();
    await closeServices(s);
    // The embedded PostgreSQL and redis-server this process started, after everything that used them.
    await local?.stop().catch((err: unknown) => s.log.warn({ err }, 'shutdown: stopping the embedded services failed'));
    s.log.info({ code }, 'stopped');
    s.log.flush();
    process.exit(code);
  };
  // METRICS_PORT (docs/operations.md, "Metrics and alerts"): the primary serves its own metrics and
  // its forks'; a fork answers the primary's requests over the cluster channel.
  if (cluster.isWorker && s.config.metrics.port !== null) answerMetricsRequests(s.metrics.registry);
  if (serving.port) {
    try {
      metricsServer = await listenMetrics(s, { forks: opts.web && s.config.webConcurrency > 1 });
    } catch (err) {
      process.stderr.write(`error: ${err instanceof StartupError ? err.message : String(err)}\n`);
      await closeServices(s).catch(() => {});
      await local?.stop().catch(() => {});
      process.exit(1);
    }
    s.log.info({ port: metricsServer.port, token: s.config.metrics.token !== null }, 'metrics served on METRICS_PORT');
  } else if (serving.api) s.log.info('metrics served at GET /metrics on PORT, behind METRICS_TOKEN');
  // Listen before the workers start: a process that cannot take its port takes no job either.
  if (opts.web && cluster.isPrimary && s.config.webConcurrency > 1) {
    // The forks use the primary's Postgres and Redis, embedded ones included.
    // (A Redis Cluster is named by REDIS_CLUSTER_NODES, which the forks inherit.)
    const env = {
      DATABASE_URL: s.config.databaseUrl,
      ...(s.config.redisCluster ? {} : { REDIS_URL: s.config.redisUrl }),
      ...(local?.embedded ? { EMBEDDED_SERVICES: 'true' } : {}),
    };
    forks = forkWebProcesses(s.config.webConcurrency, s.log, (line) => {
      if (line) process.stderr.write(`error: ${line}\n`);
      void stop('web process failed', 1);
    }, env);
  } else if (opts.web) {
    try {
      web = await listenGracefully(createApp(s), s.config.port);
    } catch (err) {
      const line = err instanceof StartupError ? err.message : String(err);
      // A forked web process reports to its primary, which prints the line once for all of them.
      if (cluster.isWorker && process.send) process.send({ type: LISTEN_FAILED, line }, () => process.exit(1));
      else {
        process.stderr.write(`error: ${line}\n`);
        await local?.stop().catch(() => {});
        process.exit(1);
      }
      return;
    }
    s.log.info({ port: s.config.port, url: s.config.publicBaseUrl }, 'listening');
  }
  if (opts.workers) workers = await startWorkers(s);
  s.log.info({ web: opts.web, workers: opts.workers }, 'started');

  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * Within SHUTDOWN_TIMEOUT_MS: connections with nothing to answer get the keep-alive grace clients
 * already expect (at most a quarter of the timeout), and connections still open near the end are cut,
 * leaving time to close the workers, queues and pools before the timeout.
 */
export function drainPlan(timeoutMs: number, keepAliveMs: number): DrainPlan {
  return { idleGraceMs: Math.min(keepAliveMs, timeoutMs / 4), forceAfterMs: timeoutMs - Math.min(2000, timeoutMs / 5) };
}

/**
 * Waits for the workers to finish their jobs, but no longer than `ms`: a job still running then is
 * left to its lock, which lapses when the process exits, and another worker runs it again (every
 * handler is idempotent, as for a worker that is killed).
 */
function releaseAfter(closing: Promise<void>, ms: number, onRelease: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => (onRelease(), resolve()), ms);
  });
  return Promise.race([closing, deadline]).finally(() => clearTimeout(timer));
}
