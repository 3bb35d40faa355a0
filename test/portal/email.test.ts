import { describe, expect, it } from 'vitest';
import { portalLinkEmail } from '../../src/email/sign-in-templates.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually, settled } from '../helpers/wait.ts';
import { createCustomer, PortalClient } from './helpers.ts';

// The portal_link email over real SMTP (the service's worker sends it to an SMTP server in this
// process): branded, with a link that works once, and the link gone from the stored row once sent.
const smtp = useSmtp();
const t = useTestServer(() => ({ workers: true, env: { SMTP_URL: smtp.url, EMAIL_FROM: 'portal@pay.example' } }));

const LINK = /http:\/\/\S+\/sign-in\?token=[A-Za-z0-9_-]{43}/;

describe('the portal_link email', () => {
  it('when a known customer asks for a link, then a branded email arrives over SMTP whose link signs in once; the stored row no longer holds it', async () => {
    const { accountId, test, live } = await t.account();
    await t.request('PATCH', '/v1/account', {
      key: live,
      body: { business_name: 'Harbour Tea Rooms', brand_color: '#0a7c55', logo_url: 'https://cdn.harbour.example/logo.png', support_email: 'help@harbour.example' },
    });
    const cus = await createCustomer(t, test, { email: 'ada@example.com', first_name: 'Ada' });
    const c = new PortalClient(t);
    expect((await c.askForLink(accountId, 'ada@example.com', 'test')).status).toBe(200);

    const mail = await smtp.waitFor((m) => m.to.includes('ada@example.com'));
    expect(mail.subject).toBe('[Test mode] Sign in to your account with Harbour Tea Rooms');
    expect(mail.parsed.from?.value[0]).toMatchObject({ name: 'Harbour Tea Rooms', address: 'portal@pay.example' });
    expect(mail.parsed.replyTo?.value[0]?.address).toBe('help@harbour.example');
    expect(mail.text).toContain('The link works once, until');
    const url = LINK.exec(mail.text)![0];
    expect(url.startsWith(`${t.url}/portal/${accountId}/sign-in?token=`)).toBe(true);
    expect(mail.html).toContain(`href="${url}"`);
    expect(mail.html).toContain('background:#0a7c55');
    expect(mail.html).toContain('src="https://cdn.harbour.example/logo.png"');

    const first = await new PortalClient(t).follow(url);
    expect(first.status).toBe(303);
    expect((await new PortalClient(t).follow(url)).status).toBe(410);

    // Once sent, the link is gone from the stored email, and the API never shows its parts.
    const [row] = await eventually(async () => {
      const rows = await t.sql`select * from emails where id = ${mail.emailId} and status = 'SENT'`;
      return rows.length ? rows : null;
    });
    expect(row!.text_body).not.toMatch(LINK);
    expect(row!.text_body).toContain('token=[removed once the email had left]');
    expect(row!.html_body).not.toMatch(/token=[A-Za-z0-9_-]{43}/);
    const api = await t.request('GET', `/v1/emails/${mail.emailId}`, { key: test });
    expect(api.body).toMatchObject({ template: 'portal_link', to: 'ada@example.com', related_object: cus.id, status: 'SENT' });
    expect(api.body.text).not.toContain('token');
  });

  it('when a customer asks at the plain address (no mode), then each mode the email is a customer in sends its own link, each signing in to its own mode only', async () => {
    const { accountId, test, live } = await t.account();
    const testCus = await createCustomer(t, test, { email: 'both.modes@example.com' });
    const onlyTest = await createCustomer(t, test, { email: 'test.only@example.com' });
    const liveCus = await createCustomer(t, live, { email: 'both.modes@example.com' });
    expect((await new PortalClient(t).askForLink(accountId, 'test.only@example.com')).status).toBe(200);
    const testMail = await smtp.waitFor((m) => m.to.includes('test.only@example.com'));
    expect(testMail.subject).toMatch(/^\[Test mode\] Sign in/);
    const c = new PortalClient(t);
    expect((await c.follow(LINK.exec(testMail.text)![0])).status).toBe(303);
    const home = await c.get(`/portal/${accountId}`);
    expect(home.html).toContain('Test mode');
    expect(await t.sql`select livemode, customer_id from portal_sessions where customer_id = ${onlyTest.id}`).toEqual([{ livemode: false, customer_id: onlyTest.id }]);

    expect((await new PortalClient(t).askForLink(accountId, 'both.modes@example.com')).status).toBe(200);
    await eventually(async () => smtp.to('both.modes@example.com').length === 2);
    const mails = smtp.to('both.modes@example.com');
    expect(mails.map((m) => m.subject.startsWith('[Test mode]')).sort()).toEqual([false, true]);
    for (const m of mails) {
      const client = new PortalClient(t);
      expect((await client.follow(LINK.exec(m.text)![0])).status).toBe(303);
    }
    const sessions = await t.sql`select livemode, customer_id from portal_sessions where customer_id in (${testCus.id}, ${liveCus.id}) order by livemode`;
    expect(sessions).toEqual([
      { livemode: false, customer_id: testCus.id },
      { livemode: true, customer_id: liveCus.id },
    ]);
  });

  it('when an unknown email asks, then no email is sent', async () => {
    const { accountId } = await t.account();
    const c = new PortalClient(t);
    expect((await c.askForLink(accountId, 'stranger@example.com')).status).toBe(200);
    // The lookup runs after the answer: once it is done, no email row exists, so no job will send one.
    await settled(t);
    expect(await t.sql`select 1 from emails where account_id = ${accountId}`).toHaveLength(0);
    expect(smtp.to('stranger@example.com')).toHaveLength(0);
  });
});

describe('the portal_link template', () => {
  it('when there is one record, then one button; several, one link each labelled; a live email has no test-mode marks; values are escaped', () => {
    const expiresAt = new Date('2026-03-01T12:15:00Z');
    const one = portalLinkEmail({ merchantName: 'Tea & <Co>', links: [{ url: 'https://pay.example/portal/acct_1/sign-in?token=x', label: null }], expiresAt, livemode: true });
    expect(one.subject).toBe('Sign in to your account with Tea & <Co>');
    expect(one.text).toContain('Sign in: https://pay.example/portal/acct_1/sign-in?token=x');
    expect(one.text).toContain('until March 1, 2026 at 12:15 PM UTC');
    expect(one.html).toContain('Tea &amp; &lt;Co&gt;');
    expect(one.html).not.toContain('<Co>');
    expect(one.text).not.toContain('test mode');
    const two = portalLinkEmail({
      merchantName: null,
      links: [
        { url: 'https://x/1', label: 'Ada Lovelace (since Jan 1, 2026)' },
        { url: 'https://x/2', label: 'Ada Byron, Old Co (since Jan 1, 2020)' },
      ],
      expiresAt,
      livemode: false,
    });
    expect(two.subject).toBe('[Test mode] Sign in to your account with the merchant');
    expect(two.text).toContain('Sign in as Ada Lovelace (since Jan 1, 2026): https://x/1');
    expect(two.text).toContain('Sign in as Ada Byron, Old Co (since Jan 1, 2020): https://x/2');
    expect(two.html).toContain('href="https://x/2"');
  });
});
