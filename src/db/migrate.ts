import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { setRoleBounds, type DbTimeouts } from './bounds.ts';
import type { Sql } from './sql.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
const LOCK_KEY = 7_210_001; // advisory lock shared by every process that migrates

/**
 * Applies the pending forward-only migrations `NNNN_name.sql`, each in its own transaction that
 * takes the advisory lock and records itself first; a second process waits on the lock, then
 * finds the migration recorded and skips it.
 */
async function migrationFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
}

/** Migration files not yet recorded in the database. */
export async function pendingMigrations(sql: Sql, dir = MIGRATIONS_DIR): Promise<string[]> {
  const [exists] = await sql`select to_regclass('schema_migrations') as t`;
  const done = new Set(exists?.t ? (await sql`select name from schema_migrations`).map((r) => r.name as string) : []);
  return (await migrationFiles(dir)).filter((f) => !done.has(f));
}

export async function migrate(sql: Sql, dir = MIGRATIONS_DIR): Promise<string[]> {
  // Under the lock too: two concurrent `create table if not exists` can still collide in pg_type.
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`;
  });
  const files = await migrationFiles(dir);
  const applied: string[] = [];
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    const body = await readFile(path.join(dir, file), 'utf8');
    const did = await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
      const inserted = await tx`
        insert into schema_migrations (version, name) values (${version}, ${file})
        on conflict (version) do nothing returning version`;
      if (inserted.length === 0) return false;
      // A migration may rewrite a large table: the pool's statement and lock bounds are for requests.
      await tx`set local statement_timeout = 0`;
      await tx`set local lock_timeout = 0`;
      await tx.unsafe(body);
      return true;
    });
    if (did) applied.push(file);
  }
  return applied;
}

/**
 * Behind a transaction pooler (DATABASE_TRANSACTION_POOLING): writes the bounds as the role's
 * defaults in this database (src/db/bounds.ts), under the migrations' lock. Run after `migrate`.
 */
export async function migrateRoleBounds(sql: Sql, t: DbTimeouts): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    await setRoleBounds(tx, t);
  });
}
