import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { createCustomer, PortalClient } from './helpers.ts';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('asking for links, per email', () => {
  const t = useTestServer({ env: { PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: '0', PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: '3' } });

  it('when an email asks more than the limit in an hour, then 429 with Retry-After and the form, nothing more is sent, and other emails are unaffected', async () => {
    const { accountId, test } = await t.account();
    await createCustomer(t, test, { email: 'target@example.com' });
    const c = new PortalClient(t);
    for (let i = 0; i < 3; i++) expect((await c.askForLink(accountId, i === 1 ? 'TARGET@example.com' : 'target@example.com', 'test')).status).toBe(200);
    const refused = await c.askForLink(accountId, ' Target@Example.com ', 'test');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.html).toContain('Too many sign-in links were asked for. Please try again in');
    expect(refused.html).toMatch(/<label for="email">Email<\/label>/);
    await wait(300);
    expect(await t.sql`select 1 from emails where template = 'portal_link' and lower(to_address) = 'target@example.com'`).toHaveLength(3);
    // The same email at another merchant counts too (the limit protects the inbox); another email does not.
    const other = await t.account();
    expect((await c.askForLink(other.accountId, 'target@example.com')).status).toBe(429);
    expect((await c.askForLink(accountId, 'someone.else@example.com', 'test')).status).toBe(200);
  });
});

describe('asking for links, per client address', () => {
  const t = useTestServer({ env: { PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: '2', PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });

  it('when one address asks more than the limit, then 429 whatever email it tries', async () => {
    const { accountId } = await t.account();
    const c = new PortalClient(t);
    expect((await c.askForLink(accountId, 'a@example.com')).status).toBe(200);
    expect((await c.askForLink(accountId, 'b@example.com')).status).toBe(200);
    const refused = await c.askForLink(accountId, 'c@example.com');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Reading the page is not counted.
    expect((await c.get(`/portal/${accountId}`)).status).toBe(200);
  });
});
