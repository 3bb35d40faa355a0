import { describe, expect, it } from 'vitest';
import { runScript } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { DashClient } from './client.ts';

const t = useTestServer();
const env = () => ({ PATH: process.env.PATH, DATABASE_URL: t.s.config.databaseUrl, PUBLIC_BASE_URL: t.url, LOG_LEVEL: 'silent' });

describe('npm run users:create', () => {
  it('creates a user without a password and prints only a one-time link that lets them choose one and sign in', async () => {
    const { accountId } = await t.account();
    const r = await runScript('scripts/create-user.ts', ['--account', accountId, '--email', 'first@example.com'], env()).done;
    expect(r.code, r.stderr).toBe(0);
    const link = r.stdout.trim();
    expect(link).toMatch(new RegExp(`^${t.url}/dashboard/set-password\\?token=[A-Za-z0-9_-]{43}$`));
    expect(r.stderr).toContain('created user first@example.com');
    const [user] = await t.sql`select account_id, password_hash from dashboard_users where email = 'first@example.com'`;
    expect(user).toEqual({ account_id: accountId, password_hash: null });

    const c = new DashClient(t);
    const path = link.slice(t.url.length);
    expect((await c.get(path)).status).toBe(200);
    const token = new URL(link).searchParams.get('token')!;
    expect((await c.post('/dashboard/set-password', { token, password: 'first user password', confirm: 'first user password' })).status).toBe(303);
    expect((await new DashClient(t).signIn('first@example.com', 'first user password')).status).toBe(303);

    // Run again for the same email: a new link for the existing user (a forgotten password).
    const again = await runScript('scripts/create-user.ts', ['--account', accountId, '--email', 'FIRST@example.com'], env()).done;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('found user first@example.com');
    expect(await t.sql`select 1 from dashboard_users where account_id = ${accountId}`).toHaveLength(1);
  });

  it('refuses an unknown account, a malformed account id and a malformed email, printing no link', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--account', 'acct_00000000000000000000000000', '--email', 'x@example.com'], /no such account|--account must be/],
      [['--account', 'nope', '--email', 'x@example.com'], /--account must be an account id/],
      [['--account', (await t.account()).accountId, '--email', 'not an email'], /--email: Enter an email address/],
    ];
    for (const [args, message] of cases) {
      const r = await runScript('scripts/create-user.ts', args, env()).done;
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    }
  });
});
