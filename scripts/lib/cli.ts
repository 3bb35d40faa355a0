// What the command-line scripts (migrate, keys:create, users:create) share: their options and
// usage, exit codes (0 done or --help, 1 failed, 2 wrong arguments), and the database they work on.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import type { Config } from '../../src/config.ts';
import { connect, ensureDatabase, requireDatabase, type Sql } from '../../src/db/sql.ts';
import { StartupError } from '../../src/lib/dependencies.ts';
import { resolveLocalServices } from '../../src/ops/local-services.ts';

/** A failure to report in one line (exit 1). */
export class CommandError extends Error {}

/** Wrong arguments: one line, then the usage, on stderr; exit 2. */
export function usageError(message: string, usage: string): never {
  process.stderr.write(`error: ${message}\n\n${usage}`);
  process.exit(2);
}

type Values<T extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ options: T; strict: true; allowPositionals: false }>>['values'];

/**
 * Parses argv strictly: `--help`/`-h` prints the usage on stdout and exits 0; an unknown option,
 * a missing value or a stray argument is a usage error (exit 2), never a stack trace.
 */
export function parseCommandLine<T extends ParseArgsOptionsConfig>(usage: string, options: T): Values<T> {
  let values: Values<T>;
  try {
    values = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } } as T, strict: true as const, allowPositionals: false as const }).values;
  } catch (err) {
    // Node's messages end with a hint about `--` meant for scripts that take positionals: drop it.
    usageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''), usage);
  }
  if ((values as { help?: boolean }).help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return values;
}

/**
 * Runs `work` on the project's database: DATABASE_URL, else PostgreSQL on 127.0.0.1:5432, else the
 * embedded PostgreSQL of `npm start` (src/ops/local-services.ts): the running one, or started for
 * this command and stopped when it ends, with one line on stderr. A missing database is created
 * (and said on stderr) outside production; in production only by `npm run migrate` (`create`),
 * every other command refusing with one line, as the web and worker processes do.
 */
export async function withDatabase<T>(config: Config, work: (sql: Sql) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const say = (line: string, owned: boolean) => process.stderr.write(`${line}${owned ? '; it stops when this command ends' : ''}\n`);
  const local = await resolveLocalServices({ ...config, role: 'command', say });
  try {
    if (opts.create || !config.production) {
      if (await ensureDatabase(local.databaseUrl)) process.stderr.write(`created the database ${databaseLabel(local.databaseUrl)}\n`);
    } else {
      await requireDatabase(local.databaseUrl);
    }
    const sql = connect(local.databaseUrl, 1, undefined, config.dbSession);
    try {
      return await work(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await local.stop();
  }
}

/** "payments on 127.0.0.1:5432": a database URL without its credentials. */
function databaseLabel(url: string): string {
  const u = new URL(url);
  return `"${decodeURIComponent(u.pathname.slice(1))}" on ${u.hostname}:${u.port || 5432}`;
}

/** Ends the script: exit 0, or one line on stderr and exit 1. */
export async function main(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    const known = err instanceof CommandError || err instanceof StartupError || (err as Error).message?.startsWith('invalid configuration');
    process.stderr.write(`error: ${known ? (err as Error).message : String(err)}\n`);
    process.exit(1);
  }
}
