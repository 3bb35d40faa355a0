import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { migrate, pendingMigrations } from './db/migrate.ts';
import { StartupError } from './db/sql.ts';
import { forkWebProcesses, type WebForks } from './ops/cluster.ts';
import { closeServices, createServices, type Services } from './services.ts';
import { startWorkers, type RunningWorkers } from '../workers/index.ts';

export interface RunOptions {
  web: boolean;
  workers: boolean;
  migrate: boolean;
}

/** Starts the web process, the workers, or both, and stops them cleanly on SIGTERM or SIGINT. */
export async function run(opts: RunOptions): Promise<void> {
  // A forked web process (WEB_CONCURRENCY > 1) only serves HTTP: its primary migrated and runs the workers.
  if (cluster.isWorker) opts = { web: true, workers: false, migrate: false };
  let s: Services;
  try {
    const config = loadConfig();
    s = await createServices(config);
    if (opts.migrate) {
      const applied = await migrate(s.sql);
      if (applied.length) s.log.info({ applied }, 'migrations applied');
    } else {
      const pending = await pendingMigrations(s.sql);
      if (pending.length) throw new StartupError(`the database schema is behind (${pending.join(', ')} pending): run \`npm run migrate\` first.`);
    }
  } catch (err) {
    process.stderr.write(`error: ${err instanceof StartupError || (err as Error).message.startsWith('invalid configuration') ? (err as Error).message : String((err as Error).stack)}\n`);
    process.exit(1);
  }

  if (s.config.webhookAllowInsecureTargets) {
    s.log.warn('WEBHOOK_ALLOW_INSECURE_TARGETS=true: webhook URLs may be plain http and private addresses. Use it for development and tests only.');
  }

  let server: Server | undefined;
  let forks: WebForks | undefined;
  let workers: RunningWorkers | undefined;
  if (opts.workers) workers = await startWorkers(s);
  if (opts.web && cluster.isPrimary && s.config.webConcurrency > 1) {
    forks = forkWebProcesses(s.config.webConcurrency, s.log);
  } else if (opts.web) {
    const app = createApp(s);
    server = app.listen(s.config.port, () => s.log.info({ port: s.config.port, url: s.config.publicBaseUrl }, 'listening'));
  }
  s.log.info({ web: opts.web, workers: opts.workers }, 'started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    s.log.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => {
      s.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, s.config.shutdownTimeoutMs);
    force.unref();
    if (server) {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    }
    await forks?.stop();
    await workers?.close();
    await closeServices(s);
    s.log.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
