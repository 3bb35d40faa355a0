import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD } from './client.ts';

describe('sign-in throttling per email', () => {
  const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '3' } });
  it('answers 429 with Retry-After after the limit, even with the right password, for that email only', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'target@example.com');
    await createUser(t, accountId, 'other@example.com');
    const c = new DashClient(t);
    await c.get('/dashboard/sign-in');
    for (let i = 0; i < 3; i++) expect((await c.post('/dashboard/sign-in', { email: 'target@example.com', password: `guess number ${i}` })).status).toBe(401);
    const refused = await c.post('/dashboard/sign-in', { email: 'TARGET@example.com', password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.html).toContain('Too many sign-in attempts');
    expect(refused.setCookies.some((s) => s.startsWith('dash_session='))).toBe(false);
    expect((await c.post('/dashboard/sign-in', { email: 'other@example.com', password: PASSWORD })).status).toBe(303);
  });
});

describe('sign-in throttling per client address', () => {
  const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '2', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });
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
