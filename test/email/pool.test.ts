import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import { queueEmail } from '../../src/email/outbox.ts';
import { createMailer, SMTP_OPTIONS } from '../../src/email/transport.ts';
import { receiptEmail } from '../../src/email/templates.ts';
import { emailWorker } from '../../workers/email.ts';
import { useTestServer } from '../helpers/server.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';

// The transport keeps a small pool of SMTP connections (src/email/transport.ts). A mail server that
// restarts drops them: the next email must still arrive, on a new connection, and only once.

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(async () => {
  await smtp.close();
});
const t = useTestServer(() => ({ workers: [emailWorker], env: { SMTP_URL: smtp.url, EMAIL_BACKOFF_BASE_MS: '200' } }));

async function queue(to: string): Promise<string> {
  const owner = { accountId: (await t.account()).accountId, livemode: false };
  const row = await withTx(t.s, t.s.log, (tx) =>
    queueEmail(tx, t.s, owner, {
      to,
      template: 'receipt',
      render: (m) =>
        receiptEmail({
          merchantName: m.name, paymentId: 'pay_pool', amountCents: 500, currency: 'usd', description: 'Tea', lineItems: null,
          paidAt: new Date(), card: null, receiptUrl: 'https://pay.example/r', invoiceNumber: null,
        }),
    }),
  );
  return row!.id;
}

const status = async (id: string) => (await t.sql<{ status: string; attempts: number }[]>`select status, attempts from emails where id = ${id}`)[0]!;

describe('a mail server that restarts under the pool', () => {
  it('when the SMTP server restarts between two emails, then the second still arrives once, over a new connection', async () => {
    const first = await queue('first@example.com');
    await smtp.waitFor((m) => m.emailId === first);
    const port = smtp.port;
    await smtp.close(); // drops the pooled connection
    smtp = await startSmtp(port);

    const second = await queue('second@example.com');
    await smtp.waitFor((m) => m.emailId === second);
    await eventually(async () => (await status(second)).status === 'SENT');
    expect(smtp.received.filter((m) => m.emailId === second)).toHaveLength(1);
    expect((await status(first)).status).toBe('SENT');
  });

  it('when a new mailer sends ten emails at once as its first, then they share the one transport it opens: all arrive, over at most its pool of connections', async () => {
    // The transport is opened with the first message (nodemailer is loaded then, not at start):
    // concurrent first sends must wait for that one opening, not each open a transport of its own.
    const mailer = createMailer({ ...t.s.config, email: { ...t.s.config.email, smtpUrl: smtp.url } }, t.s.log);
    const before = smtp.connections;
    try {
      const ids = Array.from({ length: 10 }, (_, i) => `em_race_${i}`);
      const from = { name: 'Tea', address: 'shop@example.com' };
      await Promise.all(ids.map((emailId) => mailer.send({ from, to: `${emailId}@example.com`, subject: 'Race', text: 'Hi', html: '<p>Hi</p>', emailId })));
      for (const id of ids) expect(smtp.received.filter((m) => m.emailId === id)).toHaveLength(1);
      expect(smtp.connections - before).toBeGreaterThanOrEqual(1);
      expect(smtp.connections - before).toBeLessThanOrEqual(SMTP_OPTIONS.maxConnections);
    } finally {
      mailer.close();
    }
  });
});
