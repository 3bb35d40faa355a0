import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { StartupError } from '../lib/dependencies.ts';

/**
 * Who runs the embedded PostgreSQL, and what it can reach. PostgreSQL refuses to run as root, so as
 * root it runs as the `postgres` OS user; that user must be able to walk down to its data and to its
 * binaries. In most containers and CI jobs the project is cloned into root's 0700 home (or a
 * `mktemp -d`), where it can reach neither `.data` nor `node_modules`. Then, with no setting:
 * - the data folder moves out of the project, to one of its own under /var/lib/payments-service
 *   (or the temporary folder when /var/lib cannot be written), named after the project folder;
 * - the binaries are copied from node_modules into that data folder (once per version, about 60 MB).
 * LOCAL_DATA_DIR, when set, is used as given: one the postgres user cannot reach is an error.
 */

const exec = promisify(execFile);

export interface RunAs {
  uid?: number;
  gid?: number;
}

function passwdEntry(name: string): { uid: number; gid: number } | null {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // no /etc/passwd
  }
  return null;
}

const asRoot = () => process.getuid?.() === 0;

/** Who runs the server: ourselves, or the `postgres` OS user when we are root (created when missing). */
export async function runAs(): Promise<{ ids: RunAs; created: boolean }> {
  if (!asRoot()) return { ids: {}, created: false };
  const found = passwdEntry('postgres');
  if (found) return { ids: found, created: false };
  for (const useradd of ['useradd', '/usr/sbin/useradd', '/sbin/useradd']) {
    try {
      await exec(useradd, ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
      const made = passwdEntry('postgres');
      if (made) return { ids: made, created: true };
    } catch {
      // try the next path
    }
  }
  throw new StartupError(
    'PostgreSQL refuses to run as root and there is no `postgres` OS user to run the embedded one as: create it (useradd --system --user-group postgres), or set DATABASE_URL.',
  );
}

/**
 * The first folder above `path` that `ids` cannot walk through, or null when it can reach `path`.
 * Unknown ids (the user is still to be created) walk only where everyone may.
 */
export function closedFolderAbove(path: string, ids: RunAs | null): string | null {
  if (ids && ids.uid === undefined) return null; // not root: we run it ourselves
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    let st;
    try {
      st = statSync(dir);
    } catch {
      // not made yet: whoever makes it decides
      if (dir === dirname(dir)) return null;
      continue;
    }
    const ok = st.mode & 0o001 || (ids && st.uid === ids.uid && st.mode & 0o100) || (ids && st.gid === ids.gid && st.mode & 0o010);
    if (!ok) return dir;
    if (dir === dirname(dir)) return null;
  }
}

/** As root, the folders above `path` must let the postgres user through. */
export function checkReachable(path: string, ids: RunAs, what: string): void {
  const closed = closedFolderAbove(path, ids);
  if (closed) {
    throw new StartupError(
      `the embedded PostgreSQL runs as the OS user postgres (PostgreSQL refuses root), which cannot open ${closed} to reach ${what}: ` +
        'set LOCAL_DATA_DIR to a folder it can reach (e.g. /var/lib/payments-data), or set DATABASE_URL.',
    );
  }
}

/** Where data folders go when the project's own cannot be used: /var/lib/payments-service, else the temporary folder. */
const OUTSIDE_BASES = ['/var/lib/payments-service', join(tmpdir(), 'payments-service')];

/**
 * The data folder to use. The configured one (`.data` in the project unless LOCAL_DATA_DIR says
 * otherwise), except as root with LOCAL_DATA_DIR unset and the postgres user unable to reach it: then
 * a folder of the project's own outside it (the same for every process of the project: named after
 * the project folder, with a hash of the configured path), and why.
 */
export function chooseDataDir(dataDir: string, dataDirSet: boolean): { dataDir: string; moved: string | null } {
  if (dataDirSet || !asRoot()) return { dataDir, moved: null };
  const closed = closedFolderAbove(join(dataDir, 'postgres'), passwdEntry('postgres'));
  if (!closed) return { dataDir, moved: null };
  const project = basename(dirname(dataDir)).replace(/[^\w.-]/g, '_').replace(/^\.+/, '') || 'project';
  const name = `${project}-${basename(dataDir).replace(/[^\w.-]/g, '_').replace(/^\.+/, '')}-${createHash('sha256').update(dataDir).digest('hex').slice(0, 8)}`;
  for (const base of OUTSIDE_BASES) {
    try {
      mkdirSync(base, { recursive: true, mode: 0o755 });
      chmodSync(base, 0o755); // the postgres user walks through it to its data
      if (closedFolderAbove(join(base, name, 'postgres'), passwdEntry('postgres'))) continue;
      return { dataDir: join(base, name), moved: `${closed} is closed to the OS user postgres, which runs PostgreSQL under root` };
    } catch {
      // cannot be written: try the next
    }
  }
  return { dataDir, moved: null }; // nowhere better: the embedded PostgreSQL then says what to set
}

export interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

/**
 * The binaries as the postgres user can run them: where they are, or a copy in `dataDir` when the
 * user cannot reach node_modules (the whole `native` folder of the platform package, whose binaries
 * find their libraries and shared files beside them). Copied once per package version, into a
 * temporary folder renamed when complete; the caller holds the data folder's lock.
 */
export function reachableBinaries(bin: Binaries, version: string, dataDir: string, ids: RunAs): { bin: Binaries; copiedTo: string | null } {
  if (!closedFolderAbove(bin.postgres, ids)) return { bin, copiedTo: null };
  const native = dirname(dirname(bin.postgres));
  const target = join(dataDir, `postgres-binaries-${version}`);
  const at = (dir: string): Binaries => ({ initdb: join(dir, 'bin', 'initdb'), pg_ctl: join(dir, 'bin', 'pg_ctl'), postgres: join(dir, 'bin', 'postgres') });
  if (!existsSync(at(target).postgres)) {
    const partial = `${target}.partial`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    openUp(partial);
    renameSync(partial, target);
  }
  return { bin: at(target), copiedTo: target };
}

/** Folders 0755, files readable by all (executables stay executable): the binaries hold no secret. */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) openUp(p);
    else chmodSync(p, statSync(p).mode & 0o111 ? 0o755 : 0o644);
  }
}
