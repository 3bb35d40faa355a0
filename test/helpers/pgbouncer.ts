import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers } from '../../src/ops/pidfiles.ts';
import { freePort } from './process.ts';
import { sleep } from './wait.ts';

/** True when Debian's `pgbouncer` can be run here. */
export function pgbouncerInstalled(): boolean {
  try {
    execFileSync('pgbouncer', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A PgBouncer of this test file alone, in transaction pooling mode, on a free loopback port, in a
 * temporary folder, in front of `target` (the local Postgres, or a postgresProxy that a drill cuts).
 * Every database name is routed to the target (`* =`). The pool is smaller than the service's, so
 * that a client connection really lands on another server session from one transaction to the next.
 * The server-side waits are short, as docs/operations.md ("PgBouncer") recommends: a query waits at
 * most `query_wait_timeout` for a server connection, and a failed login is retried every second.
 * PgBouncer refuses to run as root: as root it is started with `-u postgres`.
 */
export async function startPgBouncer(target: { host: string; port: number }, opts: { poolSize?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const port = await freePort();
  const conf = join(dir, 'pgbouncer.ini');
  const log = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  writeFileSync(
    conf,
    `[databases]
* = host=${target.host} port=${target.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = transaction
default_pool_size = ${opts.poolSize ?? 4}
max_client_conn = 500
logfile = ${log}
admin_users = postgres
server_login_retry = 1
server_connect_timeout = 2
query_wait_timeout = 2
`,
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
    for (const f of ['userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, f), id('-u'), id('-g'));
  }
  const proc: ChildProcess = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), conf], { stdio: 'ignore' });
  const kill = () => proc.kill('SIGKILL');
  // A test that times out never reaches its clean-up: PgBouncer goes with the test process.
  process.once('exit', kill);
  const deadline = Date.now() + 10_000;
  while (!(await answers('127.0.0.1', port))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`pgbouncer did not start on ${port}: ${readLog(log)}`);
    await sleep(50);
  }
  return {
    port,
    /** A database URL through PgBouncer. */
    url: (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    log: () => readLog(log),
    /** A command of PgBouncer's admin console (RECONNECT: new server sessions for every pool). */
    console: (command: string) => execFileSync('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'pgbouncer', '-Atc', command], { encoding: 'utf8' }),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      process.off('exit', kill);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type PgBouncer = Awaited<ReturnType<typeof startPgBouncer>>;

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
