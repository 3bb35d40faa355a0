// `npm run -s users:create -- --account acct_… --email name@example.com`
// Creates a dashboard user of the account (or takes the existing one: a forgotten password) and
// prints a one-time link to choose a password, valid DASHBOARD_PASSWORD_LINK_HOURS (24 h).
import { parseArgs } from 'node:util';
import { accountExists } from '../src/auth/keys.ts';
import { loadConfig } from '../src/config.ts';
import { addUser, setPasswordUrl } from '../src/dashboard/service.ts';
import { migrate } from '../src/db/migrate.ts';
import { connect, ensureDatabase } from '../src/db/sql.ts';
import { StartupError } from '../src/lib/dependencies.ts';
import { isId } from '../src/lib/ids.ts';

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

const { values } = parseArgs({ options: { account: { type: 'string' }, email: { type: 'string' } } });
if (!values.account || !isId('acct', values.account)) fail(`--account must be an account id (acct_…)${values.account ? `: ${values.account}` : ''}`);
if (!values.email) fail('--email is required');

try {
  const config = loadConfig();
  await ensureDatabase(config.databaseUrl);
  const sql = connect(config.databaseUrl, 1);
  await migrate(sql);
  if (!(await accountExists(sql, values.account))) fail(`no such account: ${values.account}`);
  const result = await addUser(sql, values.account, values.email, config.dashboard.passwordLinkSeconds, true);
  await sql.end();
  if (!result.ok) fail(`--email: ${result.problem}`);
  const hours = Math.round(config.dashboard.passwordLinkSeconds / 3600);
  process.stderr.write(`${result.created ? 'created' : 'found'} user ${result.user.email} of ${values.account}; the link works once, for ${hours} h\n`);
  process.stdout.write(`${setPasswordUrl(config.publicBaseUrl, result.token)}\n`);
} catch (err) {
  fail(err instanceof StartupError ? err.message : String(err));
}
