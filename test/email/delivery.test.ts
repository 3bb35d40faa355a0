import { beforeAll, describe, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import { queueEmail } from '../../src/email/outbox.ts';
import { reconcileEmails } from '../../src/email/send.ts';
import { invitationEmail } from '../../src/email/sign-in-templates.ts';
import { invoiceEmail } from '../../src/email/templates.ts';
import { createMailer, isPermanentSendError } from '../../src/email/transport.ts';
import { emailWorker } from '../../workers/email.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';

// A mail server that refuses messages: each attempt is recorded on the row, BullMQ retries with
// the exponential backoff, and the email is SENT once the server accepts, or FAILED after
// EMAIL_MAX_ATTEMPTS (at once for a 5xx refusal).

const smtp = useSmtp();
const t = useTestServer(() => ({
  workers: [emailWorker],
  env: { SMTP_URL: smtp.url, EMAIL_MAX_ATTEMPTS: '4', EMAIL_BACKOFF_BASE_MS: '150' },
}));

let owner: { accountId: string; livemode: boolean };
beforeAll(async () => {
  owner = { accountId: (await t.account()).accountId, livemode: false };
});

async function queue(to: string) {
  const row = await withTx(t.s, t.s.log, (tx) =>
    queueEmail(tx, t.s, owner, {
      to,
      template: 'invoice',
      relatedObject: 'in_test',
      render: (m) => invoiceEmail({
        merchantName: m.name, number: 'INV-0007', currency: 'usd', lineItems: [{ name: 'Consulting', quantity: 1, amount: 10000 }],
        totalCents: 10000, amountPaidCents: 0, amountDueCents: 10000, description: null, dueDate: null,
        url: `${t.url}/invoices/tok`, pdfUrl: `${t.url}/invoices/tok/pdf`,
      }),
    }),
  );
  return row!.id;
}

const row = async (id: string) => (await t.sql`select * from emails where id = ${id}`)[0]!;
const until = (id: string, ok: (r: Record<string, any>) => boolean) =>
  eventually(async () => {
    const r = await row(id);
    return ok(r) ? r : null;
  });

describe('a failing mail server', () => {
  it('when the server refuses with 451 for a while, then attempts grow with the error recorded, and the email is SENT once it accepts, arriving once', async () => {
    smtp.refuseCode = 451;
    smtp.refuse = 'Mailbox busy, try later';
    const id = await queue('busy@example.com');
    // Attempt 2 has started (attempts count when an attempt starts), after attempt 1 failed and was recorded.
    const failing = await until(id, (r) => r.attempts >= 2 && r.last_error !== null);
    expect(failing.status).toBe('PENDING');
    expect(failing.last_error).toContain('451');
    expect(failing.last_error).toContain('Mailbox busy');
    expect((await t.request('GET', `/v1/emails/${id}`, { key: await t.key(owner.accountId, 'test') })).body).toMatchObject({ status: 'PENDING', last_error: failing.last_error });
    smtp.refuse = null;
    const sent = await until(id, (r) => r.status === 'SENT');
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    expect(sent.attempts).toBeLessThanOrEqual(4);
    expect(sent.last_error).toBeNull();
    expect(sent.failed_at).toBeNull();
    expect(smtp.received.filter((m) => m.emailId === id)).toHaveLength(1);
  });

  it('when the server refuses every attempt, then the email is FAILED after EMAIL_MAX_ATTEMPTS, and the repair pass leaves it so', async () => {
    smtp.refuseCode = 451;
    smtp.refuse = 'Still busy';
    try {
      const id = await queue('never@example.com');
      const failed = await until(id, (r) => r.status === 'FAILED');
      expect(failed.attempts).toBe(4);
      expect(failed.failed_at).toBeInstanceOf(Date);
      expect(failed.last_error).toContain('Still busy');
      await t.sql`update emails set created_at = now() - interval '1 hour' where id = ${id}`;
      expect(await reconcileEmails(t.s)).toBe(0);
      expect((await row(id)).status).toBe('FAILED');
      expect(smtp.received.filter((m) => m.emailId === id)).toHaveLength(0);
    } finally {
      smtp.refuse = null;
    }
  });

  it('when the server refuses the message for good (550), then the email is FAILED after that one attempt', async () => {
    smtp.refuseCode = 550;
    smtp.refuse = 'No such user here';
    try {
      const id = await queue('nobody@example.com');
      const failed = await until(id, (r) => r.status === 'FAILED');
      expect(failed.attempts).toBe(1);
      expect(failed.last_error).toContain('550');
      expect(failed.last_error).toContain('No such user here');
    } finally {
      smtp.refuse = null;
      smtp.refuseCode = 451;
    }
  });

  it('when the mail server is not listening at all, then the send fails fast with a connection error that is retried, not final', async () => {
    // The service's mailer pointed at a closed port.
    const closed = new URL(smtp.url);
    closed.port = '1';
    const mailer = createMailer({ ...t.s.config, email: { ...t.s.config.email, smtpUrl: closed.toString() } }, t.s.log);
    const err: unknown = await mailer.send({ from: { name: null, address: 'a@b.example' }, to: 'x@example.com', subject: 's', text: 't', html: '<p>t</p>', emailId: 'em_x' })
      .then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'ESOCKET' });
    expect(isPermanentSendError(err)).toBe(false);
    mailer.close();
  });
});

describe('an invitation email', () => {
  const TOKEN = 'Ab1_-'.repeat(8) + 'xyz';
  const queueInvitation = (to: string) =>
    withTx(t.s, t.s.log, (tx) =>
      queueEmail(tx, t.s, owner, {
        to,
        template: 'invitation',
        render: (m) => invitationEmail({ merchantName: m.name, inviterEmail: 'owner@tea.example', url: `${t.url}/dashboard/set-password?token=${TOKEN}`, expiresAt: new Date() }),
      }),
    );

  it('when it has left, then the message carried the one-time link and the row no longer holds it', async () => {
    expect(TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = (await queueInvitation('invitee@example.com'))!.id;
    expect((await row(id)).text_body).toContain(TOKEN);
    const sent = await until(id, (r) => r.status === 'SENT');
    const mail = smtp.received.find((m) => m.emailId === id)!;
    expect(mail.raw).toContain(TOKEN);
    expect(sent.text_body).not.toContain(TOKEN);
    expect(sent.html_body).not.toContain(TOKEN);
    expect(sent.text_body).toContain('set-password?token=[removed once the email had left]');
  });

  it('when it fails for good, then the row no longer holds the link either', async () => {
    smtp.refuseCode = 550;
    smtp.refuse = 'No such user here';
    try {
      const id = (await queueInvitation('gone@example.com'))!.id;
      const failed = await until(id, (r) => r.status === 'FAILED');
      expect(failed.text_body).not.toContain(TOKEN);
      expect(failed.html_body).not.toContain(TOKEN);
    } finally {
      smtp.refuse = null;
      smtp.refuseCode = 451;
    }
  });
});
