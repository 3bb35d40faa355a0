import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { useStarted } from './fixture.ts';
import { eventually } from './wait.ts';

/** One message the in-process SMTP server accepted, parsed. */
export interface ReceivedMail {
  from: string;
  /** The envelope recipients (RCPT TO). */
  to: string[];
  raw: string;
  parsed: ParsedMail;
  subject: string;
  text: string;
  html: string;
  /** Our email id (the X-Email-Id header), when the service set one. */
  emailId: string | null;
}

export interface TestSmtp {
  /** smtp://127.0.0.1:<port>: give it to the service as SMTP_URL. */
  url: string;
  port: number;
  received: ReceivedMail[];
  /** SMTP connections opened to it so far. */
  readonly connections: number;
  /** Messages to `to` (envelope), in arrival order. */
  to(address: string): ReceivedMail[];
  /** Waits until `predicate` matches a message, and returns it. */
  waitFor(predicate: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** While set, every message is refused at DATA with this SMTP error (a mail server that is failing). */
  refuse: string | null;
  /** The reply code of that refusal: 451 (temporary, the default) or a 5xx (refused for good). */
  refuseCode: number;
  close(): Promise<void>;
}

/**
 * A real SMTP server in the test process (smtp-server, no TLS, any login accepted): the service
 * talks SMTP to it exactly as to a mail provider, and the test reads what arrived.
 */
export async function startSmtp(port = 0): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const state: { refuse: string | null; refuseCode: number; connections: number } = { refuse: null, refuseCode: 451, connections: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // close() drops connections still open after this (the service's pool keeps some) instead of waiting 30 s.
    closeTimeout: 200,
    logger: false,
    onConnect: (_session, cb) => {
      state.connections++;
      cb();
    },
    onAuth: (_auth, _session, cb) => cb(null, { user: 'test' }),
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.refuse) {
          cb(Object.assign(new Error(state.refuse), { responseCode: state.refuseCode }));
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw)
          .then((parsed) => {
            const header = parsed.headers.get('x-email-id');
            received.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              emailId: typeof header === 'string' ? header : null,
            });
            cb();
          })
          .catch((err: Error) => cb(err));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${bound}`,
    port: bound,
    received,
    get connections() {
      return state.connections;
    },
    to: (address) => received.filter((m) => m.to.includes(address)),
    waitFor: (predicate, timeoutMs = 10_000) =>
      eventually(() => Promise.resolve(received.find(predicate)), timeoutMs),
    get refuse() {
      return state.refuse;
    },
    set refuse(v: string | null) {
      state.refuse = v;
    },
    get refuseCode() {
      return state.refuseCode;
    },
    set refuseCode(v: number) {
      state.refuseCode = v;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The SMTP server of a file (or of a describe block): started in beforeAll, closed in afterAll.
 * The handle reads through to it inside hooks and tests (`smtp.url`, `smtp.waitFor(…)`; `.current`
 * is the server itself). A test server's options take it as a function, declared after this:
 * `useTestServer(() => ({ env: { SMTP_URL: smtp.url } }))`.
 */
export function useSmtp(): TestSmtp & { readonly current: TestSmtp } {
  const get = useStarted('the SMTP server', startSmtp, (smtp) => smtp.close());
  return {
    get current() {
      return get();
    },
    get url() {
      return get().url;
    },
    get port() {
      return get().port;
    },
    get received() {
      return get().received;
    },
    get connections() {
      return get().connections;
    },
    to: (address) => get().to(address),
    waitFor: (predicate, timeoutMs) => get().waitFor(predicate, timeoutMs),
    get refuse() {
      return get().refuse;
    },
    set refuse(v: string | null) {
      get().refuse = v;
    },
    get refuseCode() {
      return get().refuseCode;
    },
    set refuseCode(v: number) {
      get().refuseCode = v;
    },
    close: () => get().close(),
  };
}
