import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createCustomer, merchantLink, PortalClient } from './helpers.ts';
import { portalLinkOwners } from '../helpers/portal-links.ts';

// Issue 21, point 1: a portal sign-in link is only ever sent to the email of the customer it signs
// into. The paths that mail one: the portal's form (here) and an installment's failure notice
// (test/installments/typed-email.test.ts); the merchant's POST /v1/customers/:id/portal-sessions
// answers the link and mails nothing. Read off a real SMTP server.
const smtp = useSmtp();
const t = useTestServer(() => ({ workers: true, env: { SMTP_URL: smtp.current.url, PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: '0', PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } }));

describe('who receives a portal sign-in link', () => {
  it('when the portal form is sent for an email several records share (any case, both modes), then each email goes to that address and carries links of its own records only', async () => {
    const { accountId, test, live } = await t.account();
    const older = await createCustomer(t, test, { email: 'Shared@Example.com', first_name: 'Older' });
    const newer = await createCustomer(t, test, { email: 'shared@example.com', first_name: 'Newer' });
    const liveOne = await createCustomer(t, live, { email: 'shared@example.com', first_name: 'Live' });
    await createCustomer(t, test, { email: 'someone.else@example.com' });
    expect((await new PortalClient(t).askForLink(accountId, 'SHARED@example.com')).status).toBe(200);
    await eventually(async () => smtp.current.received.filter((m) => m.subject.includes('Sign in')).length >= 2);
    const mails = smtp.current.received.filter((m) => m.subject.includes('Sign in'));
    expect(mails.map((m) => m.to).sort()).toEqual([['shared@example.com'], ['shared@example.com']]);
    const owners = await portalLinkOwners(t, mails);
    expect(owners.map((o) => o.customer_id).sort()).toEqual([older.id, newer.id, liveOne.id].sort());
    for (const o of owners) expect(o.email.toLowerCase()).toBe(o.sentTo.toLowerCase());
    // Nobody else got anything.
    expect(smtp.current.received.filter((m) => !m.to.includes('shared@example.com'))).toEqual([]);
  });

  it('when the merchant asks the API for a customer\'s portal link, then it is answered and no email is sent to anyone', async () => {
    const { test } = await t.account();
    const cus = await createCustomer(t, test, { email: 'api-only@example.com' });
    const emailsBefore = (await t.sql`select count(*)::int as n from emails`)[0]!.n;
    const link = await merchantLink(t, test, cus.id);
    expect(link.url).toMatch(/\/sign-in\?token=/);
    expect((await t.sql`select count(*)::int as n from emails`)[0]!.n).toBe(emailsBefore);
    expect(smtp.current.to('api-only@example.com')).toEqual([]);
  });
});
