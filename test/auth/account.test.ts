import { describe, expect, it } from 'vitest';
import { runScript } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

const account = (key: string) => t.request('GET', '/v1/account', { key });
const update = (key: string, body: unknown) => t.request('POST', '/v1/account', { key, body });

describe("the account's business name", () => {
  it('when a new account is read, then business_name is null; once set (trimmed) with a live key, both modes answer it; null clears it', async () => {
    const a = await t.account();
    expect((await account(a.test)).body).toEqual({ id: a.accountId, object: 'account', livemode: false, charges_enabled: true, business_name: null, support_email: null, brand_color: null, logo_url: null });
    const set = await update(a.live, { business_name: '  Tea Room  ' });
    expect(set.status).toBe(200);
    // Live payments are off here (no Stripe keys): charges_enabled is the live mode's.
    expect(set.body).toEqual({ id: a.accountId, object: 'account', livemode: true, charges_enabled: false, business_name: 'Tea Room', support_email: null, brand_color: null, logo_url: null });
    expect((await account(a.test)).body).toMatchObject({ livemode: false, business_name: 'Tea Room' });
    expect(await t.sql`select business_name from accounts where id = ${a.accountId}`).toEqual([{ business_name: 'Tea Room' }]);
    // An empty update changes nothing.
    expect((await update(a.live, {})).body.business_name).toBe('Tea Room');
    expect((await update(a.live, { business_name: null })).body.business_name).toBeNull();
    expect((await account(a.test)).body.business_name).toBeNull();
  });

  it("when one account sets its name, then another account's stays as it was", async () => {
    const a = await t.account();
    const b = await t.account();
    await update(a.live, { business_name: 'Tea Room' });
    expect((await account(b.test)).body.business_name).toBeNull();
  });

  it('when the name is empty, blank, too long, not a string, has a line break, or another field is sent, then 400 names the parameter and nothing changes', async () => {
    const a = await t.account();
    await update(a.live, { business_name: 'Tea Room' });
    const cases: Array<[unknown, string, string]> = [
      [{ business_name: '' }, 'parameter_invalid', 'business_name'],
      [{ business_name: '   ' }, 'parameter_invalid', 'business_name'],
      [{ business_name: 'x'.repeat(101) }, 'parameter_invalid', 'business_name'],
      [{ business_name: 42 }, 'parameter_invalid', 'business_name'],
      [{ business_name: 'Tea\r\nBcc: victim@example.com' }, 'parameter_invalid', 'business_name'],
      [{ business_name: 'Tea\u0000Room' }, 'parameter_invalid', 'business_name'],
      [{ business_name: 'Tea Room', id: 'acct_x' }, 'parameter_unknown', 'id'],
      [{ name: 'Tea Room' }, 'parameter_unknown', 'name'],
    ];
    for (const [body, code, param] of cases) {
      const res = await update(a.live, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code, param });
    }
    expect((await update(a.live, { business_name: 'x'.repeat(100) })).status).toBe(200);
    expect((await account(a.test)).body.business_name).toBe('x'.repeat(100));
  });
});

describe('keys:create --name', () => {
  const env = () => ({ PATH: process.env.PATH, DATABASE_URL: t.s.config.databaseUrl, LOG_LEVEL: 'silent' });

  it('when a key is created with --name, then the new account has that business name; with --account, the name is set on that account', async () => {
    const r = await runScript('scripts/create-key.ts', ['--mode', 'test', '--name', ' Tea Room '], env()).done;
    expect(r.code, r.stderr).toBe(0);
    const key = r.stdout.trim();
    const acct = (await account(key)).body;
    expect(acct.business_name).toBe('Tea Room');

    const again = await runScript('scripts/create-key.ts', ['--mode', 'live', '--account', acct.id, '--name', 'The Tea Room'], env()).done;
    expect(again.code, again.stderr).toBe(0);
    expect((await account(again.stdout.trim())).body).toMatchObject({ id: acct.id, livemode: true, business_name: 'The Tea Room' });
  });

  it('when --name is empty or too long, then it exits non-zero, creates nothing and prints no key', async () => {
    const before = (await t.sql`select count(*)::int as n from accounts`)[0]!.n;
    for (const name of ['  ', 'x'.repeat(101)]) {
      const r = await runScript('scripts/create-key.ts', ['--mode', 'test', '--name', name], env()).done;
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/--name must/);
    }
    expect((await t.sql`select count(*)::int as n from accounts`)[0]!.n).toBe(before);
  });
});
