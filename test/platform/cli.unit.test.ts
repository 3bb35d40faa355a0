import { describe, expect, it } from 'vitest';
import { runScript } from '../helpers/process.ts';

// The command-line scripts' arguments (issue 15, point 8): --help prints the usage and exits 0,
// wrong arguments are one line and the usage on stderr with exit 2, never a stack trace. Nothing
// here reaches a database: DATABASE_URL points at a port where nothing answers, so a script that
// went past its arguments would fail differently (exit 1).
const env = { PATH: process.env.PATH, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', LOG_LEVEL: 'silent' };
const SCRIPTS = [
  ['keys:create', 'scripts/create-key.ts'],
  ['users:create', 'scripts/create-user.ts'],
  ['migrate', 'scripts/migrate.ts'],
] as const;

const noStack = (s: string) => expect(s).not.toMatch(/^\s+at /m);

describe('the scripts on the command line', () => {
  it.each(SCRIPTS)('when %s gets --help or -h, then it prints its usage on stdout and exits 0', async (name, script) => {
    for (const flag of ['--help', '-h']) {
      const r = await runScript(script, [flag], env).done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: npm run (-s )?${name}`));
      expect(r.stdout).toMatch(/-h, --help/);
      expect(r.stderr).toBe('');
    }
  });

  it.each(SCRIPTS)('when %s gets an unknown option or a stray argument, then one error line and the usage on stderr, exit 2', async (_name, script) => {
    for (const [args, line] of [
      [['--nope'], "error: Unknown option '--nope'"],
      [['stray'], "error: Unexpected argument 'stray'. This command does not take positional arguments"],
    ] as const) {
      const r = await runScript(script, [...args], env).done;
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const [first, blank, usage] = r.stderr.split('\n');
      expect(first).toBe(line);
      expect(blank).toBe('');
      expect(usage).toMatch(/^Usage: npm run/);
      noStack(r.stderr);
    }
  });

  it('when keys:create gets --mode live without --account, then it refuses in one line that says where the account id comes from, creating nothing', async () => {
    const r = await runScript('scripts/create-key.ts', ['--mode', 'live', '--name', 'Tea Room'], env).done;
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe(
      'error: --mode live needs --account acct_…: a live key belongs to an existing account. Create the account with `npm run -s keys:create -- --mode test` (it prints the account id on stderr), or read the id with GET /v1/account.',
    );
  });

  it('when keys:create gets no mode, a wrong mode or a malformed account id, then a usage error (exit 2), no key', async () => {
    for (const [args, line] of [
      [[], 'error: --mode must be test or live'],
      [['--mode', 'prod'], 'error: --mode must be test or live, not prod'],
      [['--mode'], "error: Option '--mode <value>' argument missing"],
      [['--mode', 'test', '--account', 'nope'], 'error: --account is not an account id (acct_…): nope'],
    ] as const) {
      const r = await runScript('scripts/create-key.ts', [...args], env).done;
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toBe(line);
      noStack(r.stderr);
    }
  });

  it('when a script gets valid arguments but no database answers, then one error line and exit 1', async () => {
    const r = await runScript('scripts/migrate.ts', [], env).done;
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: PostgreSQL is not reachable at 127\.0\.0\.1:1 /)]);
  });
});
