// `npm run migrate`: creates the database when missing and applies pending migrations.
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { connect, ensureDatabase } from '../src/db/sql.ts';
import { StartupError } from '../src/lib/dependencies.ts';

try {
  const config = loadConfig();
  await ensureDatabase(config.databaseUrl);
  const sql = connect(config.databaseUrl, 1);
  const applied = await migrate(sql);
  await sql.end();
  process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
} catch (err) {
  process.stderr.write(`error: ${err instanceof StartupError ? err.message : String(err)}\n`);
  process.exit(1);
}
