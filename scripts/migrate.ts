// `npm run migrate`: creates the database when missing and applies pending migrations.
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { main, parseCommandLine, withDatabase } from './lib/cli.ts';

const USAGE = `Usage: npm run migrate

Creates the database when it is missing and applies the pending migrations (migrations/), each in
its own transaction under an advisory lock: safe to run from several machines at once. No options
but -h, --help.

Database: DATABASE_URL, else PostgreSQL on 127.0.0.1:5432, else the embedded PostgreSQL of
\`npm start\` (started for this command when npm start is not running).
`;

parseCommandLine(USAGE, {});

await main(async () => {
  const applied = await withDatabase(loadConfig(), migrate);
  process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
});
