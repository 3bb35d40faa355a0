import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { useStarted } from './fixture.ts';
import { freePort } from './process.ts';

/**
 * A redis-server of this test file alone, on a free port, without persistence (a restart comes
 * back empty, like a flush). Fault tests stop, restart and flush it; never the shared Redis.
 */
export async function startPrivateRedis() {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;

  const running = () => proc !== undefined && proc.exitCode === null && proc.signalCode === null;
  // A test that times out never reaches its clean-up: the server goes with the test process.
  const killOnExit = () => proc?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const up = async () => {
    if (running()) return; // a second server could not bind the port, and the first would be orphaned
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: 'ignore',
    });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    probe.on('error', () => {});
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) throw new Error(`private redis on ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };

  const down = async () => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    p.kill('SIGCONT');
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL'); // an abrupt loss, as a crashed or fenced-off Redis
    await exited;
  };

  const command = async (...args: string[]) => {
    const c = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      return await c.call(args[0]!, ...args.slice(1));
    } finally {
      c.disconnect();
    }
  };

  /** SIGSTOP: connections stay open but nothing answers (a hung host, a partition without resets). */
  const freeze = () => proc?.kill('SIGSTOP');
  const thaw = () => proc?.kill('SIGCONT');

  await up();
  /** Stops the server for good (after the test's own clean-up). */
  const dispose = async () => {
    await down();
    process.off('exit', killOnExit);
  };

  return { port, url, start: up, stop: down, dispose, freeze, thaw, flushAll: () => command('FLUSHALL'), command };
}
export type PrivateRedis = Awaited<ReturnType<typeof startPrivateRedis>>;

/**
 * The private Redis of a file: started in beforeAll, disposed of in afterAll (declare it before
 * the test server, whose afterAll must run first). The handle reads through once started.
 */
export function usePrivateRedis(): PrivateRedis {
  const get = useStarted('the private Redis', startPrivateRedis, (r) => r.dispose());
  return {
    get port() {
      return get().port;
    },
    get url() {
      return get().url;
    },
    start: () => get().start(),
    stop: () => get().stop(),
    dispose: () => get().dispose(),
    freeze: () => get().freeze(),
    thaw: () => get().thaw(),
    flushAll: () => get().flushAll(),
    command: (...args) => get().command(...args),
  };
}
