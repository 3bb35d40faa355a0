import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createMailer } from '../../src/email/transport.ts';
import { createLogger } from '../../src/lib/logger.ts';

/** Without SMTP_URL, the email is printed to the log: what that line holds, in and out of production. */
async function logged(nodeEnv: string): Promise<string> {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const mailer = createMailer(loadConfig({ NODE_ENV: nodeEnv }), createLogger('info', sink));
  await mailer.send({
    from: { name: 'Tea Room', address: 'receipts@localhost' },
    to: 'grace@example.com',
    subject: 'Sign in to your account with Tea Room',
    text: `Sign in: http://localhost:3000/portal/acct_1/sign-in?token=${'A'.repeat(20)}_-${'b'.repeat(21)}\nThe link works once.`,
    html: '<p>…</p>',
    emailId: 'em_1',
  });
  await new Promise((r) => setTimeout(r, 10)); // the log stream's write is asynchronous: one turn of the timers flushes it
  return out;
}

describe('the log mailer (no SMTP_URL)', () => {
  it('when the service runs in production, then a one-time sign-in link is hidden in the log line and the rest of the text is kept', async () => {
    const line = await logged('production');
    expect(line).toContain('email not sent: SMTP_URL is unset');
    expect(line).toContain('The link works once.');
    expect(line).not.toContain('AAAAAAAAAAAAAAAAAAAA_-');
    expect(line).toContain('token=[hidden: a one-time link is never logged in production; set SMTP_URL]');
  });

  it('when the service runs locally (not production), then the link is printed whole: how a developer without a mail server follows it', async () => {
    const line = await logged('development');
    expect(line).toContain(`token=${'A'.repeat(20)}_-${'b'.repeat(21)}`);
  });
});
