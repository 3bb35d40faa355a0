import { describe, expect, it } from 'vitest';
import { logCapture } from '../helpers/logs.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually, settled } from '../helpers/wait.ts';
import { createCustomer, PortalClient } from './helpers.ts';

describe('asking for links, per email', () => {
  // What the service logs: each request's work (after the answer) ends with one line.
  const logs = logCapture();
  const linesOf = (message: string) => logs.messages(message).length;
  const smtp = useSmtp();
  const t = useTestServer(() => ({
    workers: true,
    log: logs.log,
    env: { SMTP_URL: smtp.current.url, PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: '0', PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: '3' },
  }));

  it('when a stranger asks for a customer\'s link more than the limit in an hour, then every answer is the same "check your email" page, the customer receives 3 emails only, and other emails are unaffected', async () => {
    const { accountId, test } = await t.account();
    await createCustomer(t, test, { email: 'target@example.com' });
    await createCustomer(t, test, { email: 'someone.else@example.com' });
    const stranger = new PortalClient(t);
    const answers = [];
    for (const email of ['target@example.com', 'TARGET@example.com', 'target@example.com', ' Target@Example.com ', 'target@example.com', 'target@example.com']) {
      answers.push(await stranger.askForLink(accountId, email, 'test'));
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const a of answers) {
      expect(a.html).toContain('Check your email');
      expect(a.headers.get('retry-after')).toBeNull();
    }
    // Every request's work is done (3 sent, 3 held back), then the database and the inbox agree.
    await eventually(async () => linesOf('portal sign-in link requested') >= 3 && linesOf('portal sign-in link not sent: this address had its emails for the hour') >= 3);
    expect(await t.sql`select 1 from emails where template = 'portal_link' and lower(to_address) = 'target@example.com'`).toHaveLength(3);
    await eventually(async () => smtp.current.to('target@example.com').length === 3);

    // The same address at another merchant counts too (the limit protects the inbox): nothing sent there either.
    const other = await t.account();
    await createCustomer(t, other.test, { email: 'target@example.com' });
    expect((await stranger.askForLink(other.accountId, 'target@example.com', 'test')).status).toBe(200);
    await settled(t);
    expect(linesOf('portal sign-in link not sent: this address had its emails for the hour')).toBe(4);
    expect(await t.sql`select 1 from emails where template = 'portal_link' and account_id = ${other.accountId}`).toHaveLength(0);

    // Another address is unaffected.
    expect((await stranger.askForLink(accountId, 'someone.else@example.com', 'test')).status).toBe(200);
    await smtp.current.waitFor((m) => m.to.includes('someone.else@example.com'));
    expect(smtp.current.to('target@example.com')).toHaveLength(3);
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
