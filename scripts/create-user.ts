// `npm run -s users:create -- --account acct_… --email name@example.com`
// Creates a dashboard user of the account (or takes the existing one: a forgotten password) and
// prints a one-time link to choose a password, valid DASHBOARD_PASSWORD_LINK_HOURS (24 h).
import { accountExists } from '../src/auth/keys.ts';
import { loadConfig } from '../src/config.ts';
import { addUser, setPasswordUrl } from '../src/dashboard/service.ts';
import { migrate } from '../src/db/migrate.ts';
import { isId } from '../src/lib/ids.ts';
import { CommandError, main, parseCommandLine, usageError, withDatabase } from './lib/cli.ts';

const USAGE = `Usage: npm run -s users:create -- --account acct_… --email name@example.com

Creates a dashboard user of the account, or finds the existing one (a forgotten password), and
prints on stdout a one-time link to choose a password (valid DASHBOARD_PASSWORD_LINK_HOURS, 24 h).

  --account acct_…   the account (keys:create prints its id on stderr; GET /v1/account shows it)
  --email …          the user's email
  -h, --help         this help

The link points at PUBLIC_BASE_URL when it is set, else where the commands reach the service:
PAYMENTS_API_BASE, else http://localhost:$PORT (3000).

Database: DATABASE_URL, else PostgreSQL on 127.0.0.1:5432, else the embedded PostgreSQL of
\`npm start\` (started for this command when npm start is not running).
`;

const values = parseCommandLine(USAGE, { account: { type: 'string' }, email: { type: 'string' } });
if (!values.account || !isId('acct', values.account)) usageError(`--account must be an account id (acct_…)${values.account ? `: ${values.account}` : ''}`, USAGE);
if (!values.email) usageError('--email is required', USAGE);
const account = values.account;
const email = values.email;

await main(async () => {
  const config = loadConfig();
  const result = await withDatabase(config, async (sql) => {
    await migrate(sql);
    if (!(await accountExists(sql, account))) throw new CommandError(`no such account: ${account}`);
    return addUser(sql, account, email, config.dashboard.passwordLinkSeconds, true);
  });
  if (!result.ok) throw new CommandError(`--email: ${result.problem}`);
  const hours = Math.round(config.dashboard.passwordLinkSeconds / 3600);
  process.stderr.write(`${result.created ? 'created' : 'found'} user ${result.user.email} of ${account}; the link works once, for ${hours} h\n`);
  process.stdout.write(`${setPasswordUrl(config.commandLinkBase, result.token)}\n`);
});
