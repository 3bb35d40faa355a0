// `npm run -s keys:create -- --mode test|live [--account acct_…] [--name "Tea Room"]`
// Creates an account when none is named, then a secret key, and prints only the key on stdout.
// --name sets the account's business name (the sender name of its emails, the heading of its invoices).
import { parseArgs } from 'node:util';
import { accountExists, businessNameProblem, createAccount, createApiKey, setBusinessName } from '../src/auth/keys.ts';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { connect, ensureDatabase } from '../src/db/sql.ts';
import { StartupError } from '../src/lib/dependencies.ts';
import { isId } from '../src/lib/ids.ts';

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

const { values } = parseArgs({ options: { mode: { type: 'string' }, account: { type: 'string' }, name: { type: 'string' } } });
if (values.mode !== 'test' && values.mode !== 'live') fail('--mode must be test or live');
if (values.account !== undefined && !isId('acct', values.account)) fail(`--account is not an account id: ${values.account}`);
const name = values.name?.trim();
const nameProblem = name === undefined ? null : businessNameProblem(name);
if (nameProblem) fail(`--name ${nameProblem}`);

try {
  const config = loadConfig();
  await ensureDatabase(config.databaseUrl);
  const sql = connect(config.databaseUrl, 1);
  await migrate(sql);
  let account = values.account;
  if (account && !(await accountExists(sql, account))) fail(`no such account: ${account}`);
  if (account && name !== undefined) await setBusinessName(sql, account, name);
  account ??= await createAccount(sql, name ?? null);
  const key = await createApiKey(sql, account, values.mode);
  await sql.end();
  process.stderr.write(`created a ${values.mode} key for ${account}\n`);
  process.stdout.write(`${key}\n`);
} catch (err) {
  fail(err instanceof StartupError ? err.message : String(err));
}
