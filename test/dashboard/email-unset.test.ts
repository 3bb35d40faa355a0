import { describe, expect, it } from 'vitest';
import { emailWorker } from '../../workers/email.ts';
import { startSmtp } from '../helpers/smtp.ts';
import { startTestServer, useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { signedIn } from './client.ts';

// Issue 22, point 5: without SMTP_URL an email only goes to the log. GET /v1/emails says LOGGED
// (never SENT), the dashboard says "logged (SMTP_URL is unset)" and shows a banner on every page.

const t = useTestServer({ workers: [emailWorker as never] });
const BANNER = 'Email is not set up.';

/** An invoice sent to a new customer: its email leaves through whatever the server's mailer is. */
async function sentInvoice(server: { request: typeof t.request }, key: string): Promise<string> {
  const cus = (await server.request('POST', '/v1/customers', { key, body: { email: 'ada@example.com' } })).body.id as string;
  const inv = await server.request('POST', '/v1/invoices', { key, body: { customer_id: cus, currency: 'usd', line_items: [{ name: 'Tea', quantity: 1, amount: 1000 }] } });
  expect((await server.request('POST', `/v1/invoices/${inv.body.id}/send`, { key })).status).toBe(200);
  return inv.body.id as string;
}

describe('the dashboard without SMTP_URL', () => {
  it('when an invoice email went to the log, then the API says LOGGED, the invoice page says "logged (SMTP_URL is unset)", and every page carries the banner', async () => {
    const a = await t.account();
    const invoice = await sentInvoice(t, a.test);
    const email = await eventually(async () => {
      const list = (await t.request('GET', `/v1/emails?related_object=${invoice}`, { key: a.test })).body;
      return list.data[0]?.status !== 'PENDING' && list.data[0];
    });
    expect(email).toMatchObject({ template: 'invoice', status: 'LOGGED', transport: 'log', sent_at: expect.any(Number) });
    // Stored as it left: SENT through the log (the send job and the repair pass are unchanged).
    expect((await t.sql`select status, transport from emails where id = ${email.id}`)[0]).toEqual({ status: 'SENT', transport: 'log' });

    const c = await signedIn(t, a.accountId, 'owner@example.com');
    const page = await c.get(`/dashboard/invoices/${invoice}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<span class="badge warn">LOGGED</span> <span class="hint">logged (SMTP_URL is unset)</span>');
    expect(page.html).not.toContain('<span class="badge good">SENT</span>');
    for (const path of ['/dashboard', `/dashboard/invoices/${invoice}`, '/dashboard/settings']) {
      const html = (await c.get(path)).html;
      expect(html, path).toContain(BANNER);
      expect(html.match(/data-email-banner/g), path).toHaveLength(1);
    }

    // An invitation: the page says the email went to the log, and never shows the link (issue 25).
    await c.get('/dashboard/team');
    const invited = await c.post('/dashboard/team/invitations', { email: 'colleague@example.com', role: 'analyst' });
    expect(invited.status).toBe(303);
    const page2 = await c.get(invited.location!);
    expect(page2.html).toContain('SMTP_URL is unset, so its email (with the link to choose a password) was written to the service');
    expect(page2.html).not.toContain('set-password?token=');
  });

  it('when SMTP_URL is set, then the same email is SENT, the page shows SENT, and no banner', async () => {
    const smtp = await startSmtp();
    const server = await startTestServer({ workers: [emailWorker as never], env: { SMTP_URL: smtp.url } });
    try {
      const a = await server.account();
      const invoice = await sentInvoice(server, a.test);
      const email = await eventually(async () => {
        const list = (await server.request('GET', `/v1/emails?related_object=${invoice}`, { key: a.test })).body;
        return list.data[0]?.status !== 'PENDING' && list.data[0];
      });
      expect(email).toMatchObject({ status: 'SENT', transport: 'smtp' });
      expect((await server.request('GET', '/v1/emails?status=LOGGED', { key: a.test })).body.data).toEqual([]);
      const c = await signedIn(server, a.accountId, 'owner@example.com');
      const page = await c.get(`/dashboard/invoices/${invoice}`);
      expect(page.html).toContain('<span class="badge good">SENT</span>');
      expect(page.html).not.toContain(BANNER);
      expect((await c.get('/dashboard')).html).not.toContain(BANNER);
    } finally {
      await server.close();
      await smtp.close();
    }
  });
});
