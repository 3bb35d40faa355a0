// `npm run migrate` (the Procfile's release): creates the database when missing (the only command
// that does in production) and applies pending migrations.
import { loadConfig } from '../src/config.ts';
import { migrate, migrateRoleBounds } from '../src/db/migrate.ts';
import { main, parseCommandLine, withDatabase } from './lib/cli.ts';

const USAGE = `Usage: npm run migrate

Creates the database when it is missing (saying so on stderr) and applies the pending migrations
(migrations/), each in its own transaction under an advisory lock: safe to run from several
machines at once. In production (NODE_ENV=production) this is the only command that creates the
database: the web and worker processes, npm start and the other commands refuse a missing one.
With DATABASE_TRANSACTION_POOLING=true (PgBouncer), also writes the DB_*_TIMEOUT_MS bounds as the
defaults of the database role in this database. No options but -h, --help.

Database: DATABASE_URL, else PostgreSQL on 127.0.0.1:5432, else the embedded PostgreSQL of
\`npm start\` (started for this command when npm start is not running).
`;

parseCommandLine(USAGE, {});

await main(async () => {
  const config = loadConfig();
  const applied = await withDatabase(
    config,
    async (sql) => {
      const files = await migrate(sql);
      // Behind PgBouncer: the bounds of statements outside a transaction (src/db/bounds.ts).
      if (config.dbSession.transactionPooling) await migrateRoleBounds(sql, config.dbTimeouts);
      return files;
    },
    { create: true },
  );
  process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
});
