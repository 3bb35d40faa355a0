// A private PostgreSQL cluster for a benchmark that writes tens of gigabytes: its own data folder
// and port, so the shared server (its buffers, its WAL, its disk budget) is left alone, and settings
// of its own. initdb and pg_ctl refuse to run as root: as root they run as the postgres user.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/ops/pidfiles.ts';
import { say } from './base.ts';

const exec = promisify(execFile);

export interface PrivateCluster {
  dir: string;
  port: number;
  /** Whether the data folder existed already (a previous run's, kept). */
  reused: boolean;
  url(database: string): string;
  stop(): Promise<void>;
  /** Stops it and deletes its folder. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'pg_ctl'))) : [];
  const pick = versions.includes('15') ? '15' : versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  if (!pick) throw new Error('a private PostgreSQL cluster needs the server binaries (/usr/lib/postgresql/<version>/bin): apt-get install postgresql');
  return path.join(base, pick, 'bin');
}

const asRoot = process.getuid?.() === 0;

async function run(tool: string, args: string[]): Promise<void> {
  const bin = path.join(binDir(), tool);
  if (asRoot) await exec('runuser', ['-u', 'postgres', '--', bin, ...args], { maxBuffer: 16 << 20 });
  else await exec(bin, args, { maxBuffer: 16 << 20 });
}

async function ownByPostgres(dir: string): Promise<void> {
  if (!asRoot) return;
  const id = async (flag: string) => Number((await exec('id', [flag, 'postgres'])).stdout.trim());
  chownSync(dir, await id('-u'), await id('-g'));
}

/**
 * Starts a cluster in `dir` (made with initdb when it holds none yet; a fresh temporary folder when
 * `dir` is undefined) with `settings` (postgresql.conf names) on a free loopback port.
 */
export async function startPrivateCluster(dir: string | undefined, settings: Record<string, string>): Promise<PrivateCluster> {
  const folder = dir ?? mkdtempSync(path.join(os.tmpdir(), 'bench-pg-'));
  mkdirSync(folder, { recursive: true });
  await ownByPostgres(folder);
  const data = path.join(folder, 'data');
  const reused = existsSync(path.join(data, 'PG_VERSION'));
  if (!reused) {
    say(`private PostgreSQL: initdb in ${data}`);
    await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  }
  const port = await freePort();
  const options = [`-p ${port}`, `-k ${folder}`, '-c listen_addresses=127.0.0.1', ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  await run('pg_ctl', ['-D', data, '-l', path.join(folder, 'log'), '-w', '-t', '120', '-o', options, 'start']);
  say(`private PostgreSQL on 127.0.0.1:${port} (${reused ? 'data kept from an earlier run' : 'new'}): ${folder}`);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '120', 'stop']).catch(() => {});
  return {
    dir: folder,
    port,
    reused,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
    async destroy() {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
