import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../lib/logger.ts';

/** The message a forked web process sends its primary when it cannot take the port. */
export const LISTEN_FAILED = 'listen-failed';

export interface WebForks {
  /**
   * SIGTERM to every web process (each answers its requests and closes its connections), then
   * waits for their exit; one still running after `killAfterMs` is killed.
   */
  stop(killAfterMs: number): Promise<void>;
}

/**
 * WEB_CONCURRENCY > 1: the web process is forked that many times, sharing the port (node:cluster).
 * The primary has migrated and runs the workers; a web process that dies after it listened is
 * replaced. One that dies before it listened would die again (port taken, no permission): then
 * `fatal` is called once, with the line to print, or null when the process printed its own. `env`
 * is added to each fork's environment (the primary's resolved DATABASE_URL and REDIS_URL).
 */
export function forkWebProcesses(count: number, log: Logger, fatal: (line: string | null) => void, env?: Record<string, string>): WebForks {
  let stopping = false;
  let failed = false;
  const fail = (line: string | null) => {
    if (failed || stopping) return;
    failed = true;
    fatal(line);
  };
  const fork = (): Worker => {
    const worker = cluster.fork(env);
    let listened = false;
    worker.once('listening', () => (listened = true));
    worker.on('message', (msg: { type?: string; line?: string }) => {
      if (msg?.type === LISTEN_FAILED) fail(msg.line ?? 'a web process could not listen');
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      if (!listened) {
        log.error({ pid: worker.process.pid, code, signal }, 'a web process exited before it listened');
        // Its LISTEN_FAILED message, sent just before it exited, may still be on its way.
        setTimeout(() => fail(null), 200).unref();
        return;
      }
      log.error({ pid: worker.process.pid, code, signal }, 'a web process exited; starting another');
      setTimeout(() => !stopping && !failed && fork(), 1000).unref();
    });
    return worker;
  };
  for (let i = 0; i < count; i++) fork();
  return {
    async stop(killAfterMs) {
      stopping = true;
      const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
      await Promise.all(
        alive.map(
          (w) =>
            new Promise<void>((resolve) => {
              const kill = setTimeout(() => {
                log.error({ pid: w.process.pid }, 'a web process did not stop in time; killing it');
                w.process.kill('SIGKILL');
              }, killAfterMs);
              w.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              w.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
