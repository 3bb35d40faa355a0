// `npm run -s keys:create -- --mode test|live [--account acct_…] [--name "Tea Room"]`
// Creates a secret key and prints only the key on stdout. In test mode without --account it
// creates the account too, and prints its id on stderr; a live key needs an existing account.
// --name sets the account's business name (the sender name of its emails, the heading of its invoices).
import { accountExists, businessNameProblem, createAccount, createApiKey, setBusinessName } from '../src/auth/keys.ts';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { isId } from '../src/lib/ids.ts';
import { CommandError, main, parseCommandLine, usageError, withDatabase } from './lib/cli.ts';

const USAGE = `Usage: npm run -s keys:create -- --mode test [--name "Tea Room"]
       npm run -s keys:create -- --mode live|test --account acct_… [--name "Tea Room"]

Creates a secret API key and prints it, and only it, on stdout: this is the only time it is shown
(keys are stored as SHA-256 hashes). Further keys: POST /v1/api-keys with a key of the account.

  --mode test|live   the key's mode (required)
  --account acct_…   the account the key belongs to. Without it (test mode only) a new account is
                     created and its id printed on stderr; GET /v1/account also shows it. Live keys
                     belong to an existing account: create it with a test key first.
  --name "…"         the account's business name: sender name of its emails, heading of its invoices
  -h, --help         this help

Database: DATABASE_URL, else PostgreSQL on 127.0.0.1:5432, else the embedded PostgreSQL of
\`npm start\` (started for this command when npm start is not running).
`;

const values = parseCommandLine(USAGE, { mode: { type: 'string' }, account: { type: 'string' }, name: { type: 'string' } });
const mode = values.mode;
if (mode !== 'test' && mode !== 'live') usageError(`--mode must be test or live${mode === undefined ? '' : `, not ${mode}`}`, USAGE);
if (values.account !== undefined && !isId('acct', values.account)) usageError(`--account is not an account id (acct_…): ${values.account}`, USAGE);
if (mode === 'live' && values.account === undefined) {
  usageError(
    '--mode live needs --account acct_…: a live key belongs to an existing account. Create the account with `npm run -s keys:create -- --mode test` (it prints the account id on stderr), or read the id with GET /v1/account.',
    USAGE,
  );
}
const name = values.name?.trim();
const nameProblem = name === undefined ? null : businessNameProblem(name);
if (nameProblem) usageError(`--name ${nameProblem}`, USAGE);

await main(async () => {
  const config = loadConfig();
  const { account, key, created } = await withDatabase(config, async (sql) => {
    await migrate(sql);
    let account = values.account;
    if (account && !(await accountExists(sql, account))) throw new CommandError(`no such account: ${account}`);
    if (account && name !== undefined) await setBusinessName(sql, account, name);
    const created = account === undefined;
    account ??= await createAccount(sql, name ?? null);
    return { account, key: await createApiKey(sql, account, mode), created };
  });
  process.stderr.write(
    created
      ? `created account ${account} and a test key for it (on stdout, shown this once); a live key for this account: npm run -s keys:create -- --mode live --account ${account}\n`
      : `created a ${mode} key for account ${account}\n`,
  );
  process.stdout.write(`${key}\n`);
});
