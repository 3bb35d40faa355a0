import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../lib/logger.ts';

export interface WebForks {
  /** SIGTERM to every web process (each finishes its in-flight requests), then waits for their exit. */
  stop(): Promise<void>;
}

/**
 * WEB_CONCURRENCY > 1: the web process is forked that many times, sharing the port (node:cluster).
 * The primary has migrated and runs the workers; a web process that dies is replaced.
 */
export function forkWebProcesses(count: number, log: Logger): WebForks {
  let stopping = false;
  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      log.error({ pid: worker.process.pid, code, signal }, 'a web process exited; starting another');
      setTimeout(() => !stopping && fork(), 1000).unref();
    });
    return worker;
  };
  for (let i = 0; i < count; i++) fork();
  return {
    async stop() {
      stopping = true;
      const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
      await Promise.all(
        alive.map(
          (w) =>
            new Promise<void>((resolve) => {
              w.once('exit', () => resolve());
              w.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
