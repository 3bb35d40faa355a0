// The email benchmark (issue 13):
// 1. emails sent per second by the service (email worker, concurrency 10, one SMTP connection per
//    message) to an SMTP sink in its own process, as a ratio to bare nodemailer sending the same
//    messages to the same sink with the same concurrency and transport options, measured before
//    and after the service's run;
// 2. the cost of the receipt on the payment path: hosted-page card payments per second (the
//    simulator, card 4242, the form flow of test/helpers/payer.ts) with the receipt queued in the
//    payment's transaction vs. the same flow with the receipts participant replaced by a no-op.
// `npm run bench -- email`. Sizes: BENCH_EMAILS (default 1,000), BENCH_EMAIL_PAYMENTS per
// measured segment (default 100), BENCH_EMAIL_ROUNDS (segments per service, default 4),
// BENCH_EMAIL_PAYERS (concurrent payers, default 4).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { createTransport } from 'nodemailer';
import { sendJobOptions, SEND_JOB } from '../src/email/jobs.ts';
import { receiptEmail } from '../src/email/templates.ts';
import { SMTP_OPTIONS } from '../src/email/transport.ts';
import { newId } from '../src/lib/ids.ts';
import { Queues, QUEUE_NAMES } from '../src/queue/queues.ts';
import type { Services } from '../src/services.ts';
import { emailWorker } from '../workers/email.ts';
import {
  createAccountKey,
  environmentNote,
  fmtNum,
  fmtRatio,
  freshDatabase,
  REDIS_URL,
  ROOT,
  api,
  say,
  serviceEnvNote,
  sleep,
  startService,
  table,
  verdict,
  writeSection,
  type BenchDb,
  type BenchSettings,
  type Service,
} from './lib.ts';

const TARGETS = { throughput: 0.5, paymentPath: 0.8 };
const CONCURRENCY = emailWorker.concurrency; // the email worker's (workers/email.ts)
const FROM = { name: 'Bench Tea Shop', address: 'receipts@localhost' }; // the service's default EMAIL_FROM
// The hosted pages allow 30 payment attempts per client address and hour; every payer of the
// bench comes from 127.0.0.1. Raised for both variants alike (nothing else changes).
const PAY_LIMIT_ENV = { RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR: '1000000' };
const WARM_UP_PAYMENTS = 60;
const NO_RECEIPTS = pathToFileURL(path.join(ROOT, 'bench', 'email-no-receipts.ts')).href;

const intEnv = (name: string, def: number) => {
  const v = Number((process.env[name] ?? '').replace(/[_,]/g, ''));
  return Number.isInteger(v) && v > 0 ? v : def;
};
const now = () => performance.timeOrigin + performance.now();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

// ---------------------------------------------------------------------------------------------
// The SMTP sink (bench/email-sink.ts)

interface Sink {
  url: string;
  count(): number;
  stop(): void;
}

async function startSink(): Promise<Sink> {
  const child: ChildProcess = spawn(process.execPath, ['bench/email-sink.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let total = 0;
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the SMTP sink exited (${code}) before listening`)));
    lines.on('line', (line) => {
      const [a, b] = line.split(' ');
      if (a === 'port') resolve(Number(b));
      else if (a === 'count') total = Number(b);
    });
  });
  return { url: `smtp://127.0.0.1:${port}`, count: () => total, stop: () => void child.kill('SIGTERM') };
}

// ---------------------------------------------------------------------------------------------
// 1. Throughput

interface Message {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** `n` PENDING receipt emails, rendered as the receipts participant renders them, written straight to the table. */
async function seedEmails(db: BenchDb, accountId: string, n: number): Promise<Message[]> {
  const messages: Message[] = [];
  for (let i = 0; i < n; i++) {
    const paymentId = newId('pay');
    const r = receiptEmail({
      merchantName: FROM.name,
      paymentId,
      amountCents: 2900,
      currency: 'usd',
      description: null,
      lineItems: [
        { name: 'Green tea, 100 g', quantity: 2, amount: 850 },
        { name: 'Teapot', quantity: 1, amount: 1200 },
      ],
      paidAt: new Date(),
      card: { brand: 'visa', last4: '4242' },
      receiptUrl: `http://127.0.0.1/checkout/cs_bench${i}/receipt`,
      invoiceNumber: null,
    });
    messages.push({ id: newId('em'), to: `payer${i}@example.com`, subject: r.subject, text: r.text, html: r.html });
  }
  for (let i = 0; i < n; i += 1000) {
    const m = messages.slice(i, i + 1000);
    await db.sql`
      insert into emails (id, account_id, livemode, to_address, template, subject, text_body, html_body, related_object, dedupe_key)
      select id, ${accountId}, false, to_address, 'receipt', subject, text_body, html_body, null, null
      from unnest(${m.map((x) => x.id)}::text[], ${m.map((x) => x.to)}::text[], ${m.map((x) => x.subject)}::text[],
        ${m.map((x) => x.text)}::text[], ${m.map((x) => x.html)}::text[]) as t (id, to_address, subject, text_body, html_body)`;
  }
  return messages;
}

/** The reference: nodemailer, the service's transport options (its pool), CONCURRENCY messages in flight. */
async function bareNodemailer(smtpUrl: string, messages: Message[]): Promise<{ rate: number; cpuUs: number }> {
  const transport = createTransport({ url: smtpUrl, ...SMTP_OPTIONS, logger: false, debug: false });
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = now();
  try {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < messages.length) {
          const m = messages[next++]!;
          await transport.sendMail({ from: FROM, to: m.to, subject: m.subject, text: m.text, html: m.html, headers: { 'X-Email-Id': m.id } });
        }
      }),
    );
  } finally {
    transport.close();
  }
  const rate = messages.length / ((now() - t0) / 1000);
  const cpu = process.cpuUsage(cpu0);
  return { rate, cpuUs: (cpu.user + cpu.system) / messages.length };
}

interface ThroughputResult {
  n: number;
  service: number;
  bareBefore: number;
  bareAfter: number;
  sent: number;
  failed: number;
  attempts: number;
  sinkCount: number;
  cpuUsPerEmail: number;
  bareCpuUsPerEmail: number;
  messageBytes: number;
}

async function throughput(db: BenchDb, sink: Sink, n: number): Promise<ThroughputResult> {
  const { accountId } = await createAccountKey(db.sql, 'test');
  await db.sql`update accounts set business_name = ${FROM.name} where id = ${accountId}`;
  const messages = await seedEmails(db, accountId, n);
  const svc = await startService({ suite: 'email', databaseUrl: db.url, env: { SMTP_URL: sink.url } });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queues = new Queues(redis, 'bench_email'); // startService's prefix for this suite
  const queue = queues.get(QUEUE_NAMES.email);
  try {
    await bareNodemailer(sink.url, messages.slice(0, Math.min(1000, n))); // warm-up
    // The reference runs before and after the service's run; their mean evens out a drifting load.
    const before = await bareNodemailer(sink.url, messages);
    const opts = { config: { email: { maxAttempts: 8, backoffBaseMs: 30_000 } } } as unknown as Pick<Services, 'config'>;
    say(`email: throughput, ${fmtNum(n)} PENDING emails, worker concurrency ${CONCURRENCY}`);
    const cpu0 = svc.cpuSeconds();
    const t0 = now();
    for (let i = 0; i < n; i += 5000) {
      await queue.addBulk(messages.slice(i, i + 5000).map((m) => ({ name: SEND_JOB, data: {}, opts: sendJobOptions(opts, m.id) })));
    }
    const deadline = Date.now() + 600_000;
    for (;;) {
      const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from emails where status = 'PENDING' and account_id = ${accountId}`;
      if (row!.n === 0) break;
      if (Date.now() > deadline) throw new Error(`email: ${row!.n} emails still PENDING after 600 s`);
      await sleep(20);
    }
    const service = n / ((now() - t0) / 1000);
    const cpuUsPerEmail = ((svc.cpuSeconds() - cpu0) * 1e6) / n;
    const after = await bareNodemailer(sink.url, messages);
    const [c] = await db.sql<{ sent: number; failed: number; attempts: number }[]>`
      select count(*) filter (where status = 'SENT')::int as sent, count(*) filter (where status = 'FAILED')::int as failed,
        coalesce(sum(attempts), 0)::int as attempts
      from emails where account_id = ${accountId}`;
    await sleep(100); // the sink reports its count every 50 ms
    const messageBytes = Buffer.byteLength(messages[0]!.text) + Buffer.byteLength(messages[0]!.html);
    return {
      n,
      service,
      bareBefore: before.rate,
      bareAfter: after.rate,
      ...c!,
      sinkCount: sink.count(),
      cpuUsPerEmail,
      bareCpuUsPerEmail: (before.cpuUs + after.cpuUs) / 2,
      messageBytes,
    };
  } finally {
    await queues.close();
    redis.disconnect();
    await svc.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. The payment path

/** The form flow of test/helpers/payer.ts: open the page (CSRF cookie and token), post the card form. */
async function payOnPage(url: string, sessionId: string, i: number): Promise<void> {
  const page = await fetch(`${url}/checkout/${sessionId}`, { redirect: 'manual' });
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (page.status !== 200 || !token) throw new Error(`GET /checkout/${sessionId}: ${page.status}, no form token`);
  const res = await fetch(`${url}/checkout/${sessionId}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      _csrf: token,
      email: `payer${i}@example.com`,
      name: 'Ada Lovelace',
      card_number: '4242 4242 4242 4242',
      expiry: '12/34',
      cvc: '123',
    }).toString(),
  });
  const location = res.headers.get('location') ?? '';
  await res.arrayBuffer();
  if (res.status !== 303 || !location.startsWith('https://shop.example.com/thanks')) {
    throw new Error(`POST /checkout/${sessionId}/pay: ${res.status} to ${location || '(no location)'}`);
  }
}

/** Open sessions with a customer_email, created through the API before the clock starts. */
async function createSessions(url: string, key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) {
        const i = next++;
        const cs = await api(url, key, 'POST', '/v1/checkout/sessions', {
          currency: 'usd',
          success_url: 'https://shop.example.com/thanks?session={CHECKOUT_SESSION_ID}',
          line_items: [
            { name: 'Green tea, 100 g', quantity: 2, amount: 850 },
            { name: 'Teapot', quantity: 1, amount: 1200 },
          ],
          customer_email: `payer${i}@example.com`,
        });
        ids.push(cs.id as string);
      }
    }),
  );
  return ids;
}

/** Pays every session on the hosted page with `payers` concurrent payers; payments per second. */
async function paySessions(url: string, sessions: string[], payers: number): Promise<number> {
  let next = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: payers }, async () => {
      while (next < sessions.length) {
        const i = next++;
        await payOnPage(url, sessions[i]!, i);
      }
    }),
  );
  return sessions.length / ((now() - t0) / 1000);
}

/** One service of the payment-path measurement: the default one, or one without the receipts participant. */
interface PayService {
  receipts: boolean;
  svc: Service;
  key: string;
  accountId: string;
  /** Payments per second of each measured segment. */
  rates: number[];
  cpuSeconds: number;
  payments: number;
}

async function startPayService(db: BenchDb, sink: Sink, entry: 'main' | 'web', receipts: boolean): Promise<PayService> {
  const { accountId, key } = await createAccountKey(db.sql, 'test');
  await db.sql`update accounts set business_name = ${FROM.name} where id = ${accountId}`;
  const svc = await startService({
    suite: `email_${entry}_${receipts ? 'receipts' : 'none'}`,
    databaseUrl: db.url,
    entry,
    env: { SMTP_URL: sink.url, ...PAY_LIMIT_ENV },
    nodeArgs: receipts ? [] : ['--import', NO_RECEIPTS],
  });
  return { receipts, svc, key, accountId, rates: [], cpuSeconds: 0, payments: 0 };
}

const pendingEmails = async (db: BenchDb, accountId: string) =>
  (await db.sql<{ n: number }[]>`select count(*)::int as n from emails where account_id = ${accountId} and status = 'PENDING'`)[0]!.n;

/** A measured segment of `n` payments on one of the services. */
async function segment(db: BenchDb, p: PayService, n: number, payers: number, drain: boolean): Promise<void> {
  const sessions = await createSessions(p.svc.url, p.key, n);
  const cpu0 = p.svc.cpuSeconds();
  p.rates.push(await paySessions(p.svc.url, sessions, payers));
  p.cpuSeconds += p.svc.cpuSeconds() - cpu0;
  p.payments += n;
  // With workers in the process, the receipts of this segment are sent before the next segment
  // starts (on either service), so that none is sent during another segment.
  if (drain) await drainReceipts(db, p.accountId);
}

async function drainReceipts(db: BenchDb, accountId: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await pendingEmails(db, accountId)) > 0) {
    if (Date.now() > deadline) throw new Error('email: receipts still PENDING 120 s after their segment');
    await sleep(50);
  }
}

interface PathResult {
  entry: 'main' | 'web';
  none: PayService;
  receipts: PayService;
  noneRate: number;
  receiptsRate: number;
  receiptEmails: number;
}

/**
 * Both services run side by side (idle but for their own segment); `rounds` rounds of one segment
 * each, in the order none, receipts, receipts, none, none, receipts… so that a load drifting
 * during the run weighs on both alike.
 */
async function paymentPath(db: BenchDb, sink: Sink, entry: 'main' | 'web', rounds: number, n: number, payers: number): Promise<PathResult> {
  const none = await startPayService(db, sink, entry, false);
  const receipts = await startPayService(db, sink, entry, true);
  const drain = entry === 'main';
  try {
    for (const p of [none, receipts]) {
      await paySessions(p.svc.url, await createSessions(p.svc.url, p.key, WARM_UP_PAYMENTS), payers); // warm-up
      if (drain) await drainReceipts(db, p.accountId);
    }
    for (let k = 0; k < rounds; k++) {
      for (const p of k % 2 === 0 ? [none, receipts] : [receipts, none]) await segment(db, p, n, payers, drain);
    }
    const count = async (p: PayService) => {
      const [row] = await db.sql<{ emails: number; paid: number }[]>`
        select (select count(*)::int from emails where account_id = ${p.accountId}) as emails,
          (select count(*)::int from payments where account_id = ${p.accountId} and status = 'SUCCEEDED') as paid`;
      return row!;
    };
    const [c0, c1] = [await count(none), await count(receipts)];
    // The check that each service is what it claims: no email at all, or a receipt per payment.
    if (c0.emails !== 0 || c1.emails !== c1.paid) {
      throw new Error(`email (${entry}): ${c0.emails} emails for ${c0.paid} payments without receipts, ${c1.emails} for ${c1.paid} with`);
    }
    // Receipts no worker sent (the web-only run) must not be sent later by another run's reconciler.
    if (!drain) await db.sql`delete from emails where account_id = ${receipts.accountId}`;
    return { entry, none, receipts, noneRate: mean(none.rates), receiptsRate: mean(receipts.rates), receiptEmails: c1.emails };
  } finally {
    await none.svc.stop();
    await receipts.svc.stop();
  }
}

// ---------------------------------------------------------------------------------------------

export async function run(_settings: BenchSettings): Promise<void> {
  const n = intEnv('BENCH_EMAILS', 1000);
  const perSegment = intEnv('BENCH_EMAIL_PAYMENTS', 100);
  const rounds = intEnv('BENCH_EMAIL_ROUNDS', 4);
  const payers = intEnv('BENCH_EMAIL_PAYERS', 4);
  const db = await freshDatabase('email');
  const env = await environmentNote(db.sql);
  const sink = await startSink();
  try {
    const t = await throughput(db, sink, n);
    const bare = (t.bareBefore + t.bareAfter) / 2;
    say(`email: ${fmtNum(t.service)}/s vs bare nodemailer ${fmtNum(bare)}/s (ratio ${fmtRatio(t.service, bare)})`);

    const paths: PathResult[] = [];
    for (const entry of ['web', 'main'] as const) {
      say(`email: payment path (${entry}), ${rounds} × ${fmtNum(perSegment)} hosted-page payments per service, ${payers} payers`);
      const r = await paymentPath(db, sink, entry, rounds, perSegment, payers);
      say(`email: ${entry}: ${r.receiptsRate.toFixed(1)} payments/s with receipts vs ${r.noneRate.toFixed(1)} without (ratio ${fmtRatio(r.receiptsRate, r.noneRate)})`);
      paths.push(r);
    }
    const [web, main] = paths as [PathResult, PathResult];
    const cpuUs = (p: PayService) => `${fmtNum((p.cpuSeconds * 1e6) / p.payments)} µs`;
    const rates = (p: PayService) => p.rates.map((r) => r.toFixed(1)).join(', ');

    const note = serviceEnvNote();
    const md = [
      '## Email (issue 13)',
      '',
      `${env}.`,
      ...(note ? [note] : []),
      '',
      'The service runs with the default configuration (LOG_LEVEL info) and SMTP_URL pointing at an SMTP sink',
      '(smtp-server, no TLS, no reverse DNS lookup, accepting and discarding every message) that runs in its own',
      'process, on the same machine as PostgreSQL, Redis and this process.',
      '',
      table(
        ['Measure', 'Result', 'Reference', 'Ratio', 'Target', 'Verdict'],
        [
          [
            `Emails sent/s, ${fmtNum(n)} PENDING emails queued at once (\`node src/main.ts\`)`,
            fmtNum(t.service),
            `${fmtNum(bare)} (bare nodemailer, ${CONCURRENCY} in flight, same pool)`,
            fmtRatio(t.service, bare),
            `≥ ${TARGETS.throughput}`,
            verdict(t.service / bare >= TARGETS.throughput && t.sent === n),
          ],
          [
            `Hosted-page payments/s, receipt queued (web process alone, \`src/web.ts\`; ${payers} payers)`,
            web.receiptsRate.toFixed(1),
            `${web.noneRate.toFixed(1)} (same flow, no receipt)`,
            fmtRatio(web.receiptsRate, web.noneRate),
            `≥ ${TARGETS.paymentPath}`,
            verdict(web.receiptsRate / web.noneRate >= TARGETS.paymentPath),
          ],
          [
            `… receipt queued and sent meanwhile by the worker in the same process (\`node src/main.ts\`)`,
            main.receiptsRate.toFixed(1),
            `${main.noneRate.toFixed(1)} (same flow, no receipt)`,
            fmtRatio(main.receiptsRate, main.noneRate),
            `≥ ${TARGETS.paymentPath}`,
            verdict(main.receiptsRate / main.noneRate >= TARGETS.paymentPath),
          ],
        ],
      ),
      '',
      '### Throughput',
      '',
      `${fmtNum(n)} receipt emails (rendered by the receipt template, ${fmtNum(t.messageBytes)} bytes of text and HTML each) are`,
      'written straight to `emails` as PENDING rows, then their send jobs added to the `email` queue (BullMQ addBulk,',
      'the options `enqueueSend` uses). The clock runs from the first job added to the last row no longer PENDING',
      '(the table polled every 20 ms). Each job reads its row, counts the attempt, sends over a pooled SMTP connection',
      '(a pool of up to 5 connections) and records SENT. The reference is nodemailer alone with the same transport options,',
      `sending the same messages (same sender, recipients, subjects, bodies and header) to the same sink, ${CONCURRENCY} at a time`,
      `(the email worker's concurrency); its runs were ${fmtNum(t.bareBefore)}/s before and ${fmtNum(t.bareAfter)}/s after the service's, and the reference is their mean.`,
      '',
      `Afterwards: ${fmtNum(t.sent)} SENT, ${fmtNum(t.failed)} FAILED, ${fmtNum(t.attempts)} attempts in all; the sink accepted`,
      `${fmtNum(t.sinkCount)} messages by then (warm-up, both references and the service's run).`,
      `CPU per email: ${fmtNum(t.cpuUsPerEmail)} µs in the service (job, Postgres client, nodemailer), ${fmtNum(t.bareCpuUsPerEmail)} µs in the`,
      'bare nodemailer loop (this process): building the MIME message dominates either way.',
      '',
      '### The payment path',
      '',
      'Each payment is the form flow of a payer without a browser (test/helpers/payer.ts): GET the hosted page',
      '(CSRF cookie and token), POST the card form with card 4242 (the simulator), expect the 303 to success_url.',
      `Sessions (two line items and a customer_email) are created through the API before each segment's clock starts;`,
      `${payers} payers pay ${fmtNum(perSegment)} sessions per segment, after ${WARM_UP_PAYMENTS} warm-up payments on each service.`,
      '',
      'The hosted card form requires an email, so every payment through it has a recipient and queues its receipt',
      '(one more insert, in a savepoint, in the transaction that records the payment; the send job is added after commit).',
      'The reference is therefore the same flow on a service started with `--import bench/email-no-receipts.ts`, a',
      'loader hook that replaces the receipts participant (src/checkout/receipt.ts) with a no-op and changes nothing',
      'else; it wrote no email, the default service one receipt per payment (checked). Both services of a pair run side',
      `by side, one segment at a time, ${rounds} segments each in the order none, receipt, receipt, none, none…, so that a`,
      'load drifting during the run weighs on both alike. Both raise RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR (every payer',
      'here is 127.0.0.1, and the default allows 30 payment attempts per hour).',
      '',
      '- **Web process alone** (`src/web.ts`, as with `npm run start:web` and the workers elsewhere): what the receipt',
      '  costs the request that records the payment; its send jobs wait in Redis (no worker runs).',
      '- **One process** (`node src/main.ts`, web and workers): the email worker also sends each receipt to the sink',
      '  during the segment, on the same cores; before the next segment starts, the receipts of this one are all SENT.',
      '',
      table(
        ['Process', 'Receipts', 'Segments (payments/s)', 'Mean', 'Service CPU per payment'],
        [
          ['web alone', 'none', rates(web.none), web.noneRate.toFixed(1), cpuUs(web.none)],
          ['web alone', 'queued', rates(web.receipts), web.receiptsRate.toFixed(1), cpuUs(web.receipts)],
          ['web + workers', 'none', rates(main.none), main.noneRate.toFixed(1), cpuUs(main.none)],
          ['web + workers', 'queued and sent', rates(main.receipts), main.receiptsRate.toFixed(1), cpuUs(main.receipts)],
        ],
      ),
      '',
      `Reproduce: \`BENCH_EMAILS=${n} BENCH_EMAIL_PAYMENTS=${perSegment} BENCH_EMAIL_ROUNDS=${rounds} BENCH_EMAIL_PAYERS=${payers} npm run bench -- email\`.`,
    ].join('\n');
    await writeSection('email', md);
  } finally {
    sink.stop();
    await db.close();
  }
}
