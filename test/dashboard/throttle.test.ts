import { describe, expect, it } from 'vitest';
import { logCapture } from '../helpers/logs.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD } from './client.ts';

// Issue 21, point 5: the dashboard's sign-in limits, tried from two clients (two addresses, given
// by X-Forwarded-For through TRUST_PROXY=loopback): an attacker's wrong passwords hold back the
// attacker, never the user signing in from their own address.
const from = (t: ReturnType<typeof useTestServer>, address: string) => new DashClient(t, { 'x-forwarded-for': address });
const ATTACKER = '203.0.113.7';
const USER = '198.51.100.8';

describe('wrong passwords per email and client address', () => {
  const t = useTestServer({ env: { TRUST_PROXY: 'loopback', DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '3', DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR: '0' } });

  it('when an attacker fails 3 times for a user\'s email, then the attacker\'s address is refused (429, Retry-After) even with the right password, and the user signs in from their own', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'target@example.com');
    const attacker = from(t, ATTACKER);
    for (let i = 0; i < 3; i++) expect((await attacker.signIn('target@example.com', `guess number ${i}`)).status).toBe(401);
    const refused = await attacker.signIn('TARGET@example.com', PASSWORD);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.html).toContain('Too many sign-in attempts');
    expect(refused.setCookies.some((s) => s.startsWith('dash_session='))).toBe(false);

    const user = await from(t, USER).signIn('target@example.com', PASSWORD);
    expect(user.status).toBe(303);
    expect(user.setCookies.some((s) => s.startsWith('dash_session='))).toBe(true);
    // The attacker's address may still try other emails: the refusal is for this email only.
    await createUser(t, accountId, 'other@example.com');
    expect((await attacker.signIn('other@example.com', PASSWORD)).status).toBe(303);
  });

  it('when the user signs in after a few typos, then their count starts again', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'typo@example.com');
    const user = from(t, USER);
    for (let i = 0; i < 2; i++) expect((await user.signIn('typo@example.com', 'typo')).status).toBe(401);
    expect((await user.signIn('typo@example.com', PASSWORD)).status).toBe(303);
    const later = from(t, USER);
    for (let i = 0; i < 2; i++) expect((await later.signIn('typo@example.com', 'typo')).status).toBe(401);
    expect((await later.signIn('typo@example.com', PASSWORD)).status).toBe(303);
  });
});

describe('wrong passwords per email from every address', () => {
  const logs = logCapture();
  const delays = () => logs.messages('dashboard sign-in slowed').map((l) => l.delayMs as number);
  const t = useTestServer({
    log: logs.log,
    env: { TRUST_PROXY: 'loopback', DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '1', DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR: '2' },
  });

  it('when attackers from many addresses fail past the bound, then each attempt for that email waits longer, and the user is slowed but signs in', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'popular@example.com');
    // Two addresses, one wrong password each: each address is now refused for the email (limit 1).
    for (const address of ['203.0.113.10', '203.0.113.11']) {
      expect((await from(t, address).signIn('popular@example.com', 'wrong')).status).toBe(401);
      expect((await from(t, address).signIn('popular@example.com', PASSWORD)).status).toBe(429);
    }
    expect(delays()).toEqual([]);
    // A third address: slowed (1 s), refused nothing; its failure doubles the wait of the next.
    expect((await from(t, '203.0.113.12').signIn('popular@example.com', 'wrong')).status).toBe(401);
    expect(delays()).toEqual([1000]);
    const user = await from(t, USER).signIn('popular@example.com', PASSWORD);
    expect(user.status).toBe(303);
    expect(delays()).toEqual([1000, 2000]);
    // Another email is not slowed.
    await createUser(t, accountId, 'quiet@example.com');
    expect((await from(t, USER).signIn('quiet@example.com', PASSWORD)).status).toBe(303);
    expect(delays()).toEqual([1000, 2000]);
  });
});

describe('sign-in throttling per client address', () => {
  const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '2', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0', DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR: '0' } });
  it('answers 429 to the address over the limit, whatever email it tries', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'user@example.com');
    const c = new DashClient(t);
    await c.get('/dashboard/sign-in');
    expect((await c.post('/dashboard/sign-in', { email: 'a@example.com', password: 'wrong password' })).status).toBe(401);
    expect((await c.post('/dashboard/sign-in', { email: 'b@example.com', password: 'wrong password' })).status).toBe(401);
    const refused = await c.post('/dashboard/sign-in', { email: 'user@example.com', password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.html).toMatch(/<label for="email">Email<\/label>/); // the form is still there, with the message
  });
});
