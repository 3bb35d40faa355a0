import { Writable } from 'node:stream';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import { queueEmail } from '../../src/email/outbox.ts';
import { receiptEmail } from '../../src/email/templates.ts';
import { emailWorker } from '../../workers/email.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createSession } from '../helpers/factories.ts';

// No SMTP_URL: the service works out of the box. Emails are kept, printed to the log and listed at
// GET /v1/emails, each LOGGED (stored SENT with transport "log"): nobody received it (issue 22, point 5).

const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
    cb();
  },
});
const t = useTestServer({ workers: [emailWorker], log: pino({ level: 'info' }, sink) });

let a: { accountId: string; test: string; live: string };
let b: { accountId: string; test: string; live: string };
beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  await t.sql`update accounts set business_name = 'Tea Room' where id = ${a.accountId}`;
});

const get = (path: string, key: string) => t.request('GET', path, { key });

async function payAndReceipt(key: string, email: string) {
  const cs = await createSession(t, key, { amount: 1500, description: 'Sencha' });
  expect((await new Payer(t).pay(cs.id, { email })).status).toBe(303);
  const paymentId = (await get(`/v1/checkout/sessions/${cs.id}`, key)).body.payment_id as string;
  const email_ = await eventually(async () => {
    const list = (await get(`/v1/emails?related_object=${paymentId}`, key)).body;
    return list.data[0]?.status === 'LOGGED' ? list.data[0] : null;
  });
  return { paymentId, email: email_ };
}

describe('without SMTP_URL', () => {
  it('when a payment succeeds, then its receipt goes through the log and is LOGGED, not SENT: the log line has it, and GET /v1/emails shows the whole email', async () => {
    const { paymentId, email } = await payAndReceipt(a.test, 'Reader@Example.com');
    expect(email).toEqual({
      id: expect.stringMatching(/^em_/),
      object: 'email',
      livemode: false,
      to: 'Reader@Example.com',
      template: 'receipt',
      subject: 'Receipt from Tea Room',
      text: expect.stringContaining('$15.00'),
      html: expect.stringContaining('<!doctype html>'),
      status: 'LOGGED',
      attempts: 1,
      last_error: null,
      transport: 'log',
      related_object: paymentId,
      sent_at: expect.any(Number),
      failed_at: null,
      created: expect.any(Number),
      updated: expect.any(Number),
    });
    const line = lines.find((l) => l.emailId === email.id);
    expect(line).toMatchObject({ level: 30, msg: 'email not sent: SMTP_URL is unset', to: 'Reader@Example.com', subject: 'Receipt from Tea Room' });
    expect(line!.text).toBe(email.text);
    expect(lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('SMTP_URL is unset'))).toBe(true);

    expect((await get(`/v1/emails/${email.id}`, a.test)).body).toEqual(email);
    // `to` matches without regard to case.
    expect((await get('/v1/emails?to=reader@example.com', a.test)).body.data.map((e: { id: string }) => e.id)).toEqual([email.id]);
  });

  it('when emails are listed, then they come newest first with cursors, and status/template/related_object filters combine with them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.unshift((await payAndReceipt(b.test, `p${i}@example.com`)).email.id);
    const page1 = (await get('/v1/emails?limit=2', b.test)).body;
    expect(page1).toMatchObject({ object: 'list', url: '/v1/emails', has_more: true });
    expect(page1.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    const page2 = (await get(`/v1/emails?limit=2&starting_after=${ids[1]}`, b.test)).body;
    expect(page2.data.map((e: { id: string }) => e.id)).toEqual([ids[2]]);
    expect(page2.has_more).toBe(false);
    const back = (await get(`/v1/emails?limit=2&ending_before=${ids[2]}`, b.test)).body;
    expect(back.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect((await get('/v1/emails?status=LOGGED&template=receipt&limit=1', b.test)).body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    // Nothing was sent to a mail server: SENT lists none of them.
    expect((await get('/v1/emails?status=SENT', b.test)).body.data).toEqual([]);
    expect((await get('/v1/emails?status=FAILED', b.test)).body.data).toEqual([]);
    expect((await get('/v1/emails?template=invoice', b.test)).body.data).toEqual([]);
  });

  it('when another account or the other mode asks for an email, then it is a 404 and absent from its list', async () => {
    const { email } = await payAndReceipt(a.test, 'iso@example.com');
    for (const key of [b.test, a.live]) {
      const res = await get(`/v1/emails/${email.id}`, key);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
      expect((await get('/v1/emails?limit=100', key)).body.data.map((e: { id: string }) => e.id)).not.toContain(email.id);
    }
    expect((await get('/v1/emails/em_nope', a.test)).status).toBe(404);
    expect((await get('/v1/emails', '')).status).toBe(401);
  });

  it('when a list query is wrong, then it is a 400 naming the parameter', async () => {
    const cases: Array<[string, string, string]> = [
      ['status=DONE', 'parameter_invalid', 'status'],
      ['template=newsletter', 'parameter_invalid', 'template'],
      ['limit=0', 'parameter_invalid', 'limit'],
      ['starting_after=pay_123', 'parameter_invalid', 'starting_after'],
      ['recipient=x', 'parameter_unknown', 'recipient'],
      [`to=${'x'.repeat(300)}`, 'parameter_invalid', 'to'],
    ];
    for (const [q, code, param] of cases) {
      const res = await get(`/v1/emails?${q}`, a.test);
      expect(res.status, q).toBe(400);
      expect(res.body.error, q).toMatchObject({ code, param });
    }
  });

  it('when the same dedupe key is queued twice, then the second call writes nothing and answers null', async () => {
    const o = { accountId: a.accountId, livemode: false };
    const render = () => receiptEmail({
      merchantName: null, paymentId: 'pay_x', amountCents: 100, currency: 'usd', description: null, lineItems: null,
      paidAt: new Date(), card: null, receiptUrl: 'http://x/r', invoiceNumber: null,
    });
    const mail = { to: 'dup@example.com', template: 'receipt' as const, render, dedupeKey: 'test:dup' };
    const first = await withTx(t.s, t.s.log, (tx) => queueEmail(tx, t.s, o, mail));
    const second = await withTx(t.s, t.s.log, (tx) => queueEmail(tx, t.s, o, mail));
    expect(first?.id).toMatch(/^em_/);
    expect(second).toBeNull();
    // The same key in the other mode is another email.
    expect(await withTx(t.s, t.s.log, (tx) => queueEmail(tx, t.s, { ...o, livemode: true }, mail))).not.toBeNull();
    expect(await t.sql`select count(*)::int as n from emails where dedupe_key = 'test:dup'`).toEqual([{ n: 2 }]);
  });
});
