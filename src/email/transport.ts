import type { Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';

/** One message as it leaves: the row's content plus the sender. */
export interface OutgoingEmail {
  from: { name: string | null; address: string };
  /** The account's support_email: where the payer's replies go (the From stays EMAIL_FROM). */
  replyTo?: string | null;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Our email id: sent as a header so that a message can be traced back to its row. */
  emailId: string;
}

/** How emails leave: nodemailer over SMTP_URL, or (no SMTP_URL) the log. */
export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(msg: OutgoingEmail): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * Bounds on every SMTP conversation, so that a mail server that is down, unreachable or hung fails
 * the attempt (retried by the job) instead of holding a worker: connect, the server's greeting, and
 * any silence of the socket afterwards. Well inside WORKER_LOCK_MS (30 s by default).
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000, dnsTimeout: 10_000 } as const;

/**
 * The transport's options besides SMTP_URL: the bounds above, and a small pool. A new SMTP
 * conversation per message (TCP, greeting, STARTTLS, login) cost as much CPU as the payment whose
 * receipt it sends (bench/RESULTS.md, "Email"); a pooled connection sends up to 100 messages, at
 * most 5 at once, and one the server closed while idle is replaced on the next message (a message
 * that fails on it is retried by its job like any other failure).
 */
export const SMTP_OPTIONS = { ...SMTP_TIMEOUTS, pool: true, maxConnections: 5, maxMessages: 100 } as const;

/** What SMTP_URL says, without its password (for logs and start-up lines). */
export function describeSmtpUrl(smtpUrl: string): string {
  const u = new URL(smtpUrl);
  return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}`;
}

/**
 * An error message fit to store on the email row and to log: the SMTP URL's credentials (as typed
 * and URL-decoded) never appear in it, whatever the library put there; one line, at most 500 characters.
 */
export function scrubError(message: string, smtpUrl: string | null): string {
  let out = message;
  if (smtpUrl) {
    const u = new URL(smtpUrl);
    const secrets = [u.password, safeDecode(u.password), `${u.username}:${u.password}@`].filter((x) => x.length >= 1);
    out = out.replaceAll(smtpUrl, describeSmtpUrl(smtpUrl));
    for (const secret of secrets.sort((a, b) => b.length - a.length)) out = out.replaceAll(secret, '[redacted]');
  }
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > 500 ? `${out.slice(0, 499)}…` : out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A send error the mail server gave as final for this message (5xx to the envelope or the data:
 * recipient unknown, message refused): retrying sends nothing, so the email fails at once. A 5xx
 * to the login (a wrong password) or any connection problem is the service's side and is retried.
 */
export function isPermanentSendError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; responseCode?: unknown };
  return (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600;
}

export function createMailer(config: Config, log: Logger): Mailer {
  const { smtpUrl } = config.email;
  if (!smtpUrl) return logMailer(log, config.email.logLinks);
  // nodemailer is loaded with the first message (a web process may never send one): not at start.
  let transport: Promise<Transporter> | undefined;
  const open = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) => createTransport({ url: smtpUrl, ...SMTP_OPTIONS, logger: false, debug: false })));
  return {
    kind: 'smtp',
    async send(msg) {
      const info = await (await open()).sendMail({
        from: { name: msg.from.name ?? '', address: msg.from.address },
        to: msg.to,
        ...(msg.replyTo ? { replyTo: msg.replyTo } : {}),
        subject: msg.subject,
        text: msg.text,
        html: msg.html,
        headers: { 'X-Email-Id': msg.emailId },
      });
      return { messageId: String(info.messageId) };
    },
    close: () => void transport?.then((t) => t.close()).catch(() => {}),
  };
}

/** A one-time sign-in link's token (dashboard invitation, portal link): 32 random bytes, base64url. */
const ONE_TIME_TOKEN = /token=[A-Za-z0-9_-]{43}/g;

/** An email's text as the log may show it: one-time links hidden unless `logLinks`. */
export const loggableText = (text: string, logLinks: boolean): string =>
  logLinks ? text : text.replace(ONE_TIME_TOKEN, 'token=[hidden: a one-time link is never logged in production; set SMTP_URL]');

/**
 * No SMTP_URL: every email is printed to the log (and kept in Postgres, at GET /v1/emails), never
 * sent. Outside production the log shows one-time sign-in links, which is how a developer without a
 * mail server follows them; in production (`logLinks` false) they are hidden, as every secret is.
 */
function logMailer(log: Logger, logLinks: boolean): Mailer {
  const mailLog = log.child({ component: 'email' });
  let warned = false;
  return {
    kind: 'log',
    send(msg) {
      if (!warned) {
        warned = true;
        mailLog.warn('SMTP_URL is unset: emails are not sent; each is printed to this log and listed at GET /v1/emails');
      }
      mailLog.info({ emailId: msg.emailId, from: msg.from, to: msg.to, subject: msg.subject, text: loggableText(msg.text, logLinks) }, 'email not sent: SMTP_URL is unset');
      return Promise.resolve({ messageId: `<${msg.emailId}@log.invalid>` });
    },
    close: () => {},
  };
}
