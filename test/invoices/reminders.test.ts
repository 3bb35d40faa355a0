import { beforeAll, describe, expect, it } from 'vitest';
import { reminderJobId } from '../../src/invoices/jobs.ts';
import { reconcileReminders, sendDueReminder } from '../../src/invoices/reminders.ts';
import { addPayment } from '../../src/invoices/store.ts';
import { QUEUE_NAMES } from '../../src/queue/queues.ts';
import { eventsFor } from '../helpers/events.ts';
import { watchJobs } from '../helpers/jobs.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';

// Invoice and reminder emails over real SMTP, with a short reminder interval: one second, two reminders.
const smtp = useSmtp();
const t = useTestServer(() => ({
  workers: true,
  env: { SMTP_URL: smtp.url, INVOICE_REMINDER_INTERVAL_MS: '1000', INVOICE_REMINDER_LIMIT: '2', EMAIL_BACKOFF_BASE_MS: '100' },
}));

let key: string;
let seq = 0;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  await t.request('POST', '/v1/account', { key: a.live, body: { business_name: 'Tea Room' } });
});

/** A customer with an address of its own, so that each test reads only its own mail. */
async function customer(): Promise<{ id: string; email: string }> {
  const email = `payer${++seq}-${Date.now()}@example.com`;
  const res = await t.request('POST', '/v1/customers', { key, body: { email, first_name: 'Ada', notes: 'VIP: owes us a favour' } });
  return { id: res.body.id, email };
}

async function invoice(customerId: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await t.request('POST', '/v1/invoices', {
    key,
    body: { customer_id: customerId, currency: 'usd', line_items: [{ name: 'Oolong tea, 250 g', quantity: 2, amount: 1200 }], ...body },
  });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const send = async (id: string) => {
  const res = await t.request('POST', `/v1/invoices/${id}/send`, { key });
  if (res.status !== 200) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const get = async (id: string) => (await t.request('GET', `/v1/invoices/${id}`, { key })).body;
// Whole seconds: `ceil` and one more, so that a due date is always at least `s` seconds away (floor could leave a few ms).
const inSeconds = (s: number) => Math.ceil(Date.now() / 1000) + s;
const reminderRows = (id: string) =>
  t.sql<{ dedupe_key: string; status: string }[]>`
    select dedupe_key, status from emails where related_object = ${id} and template = 'invoice_reminder' order by id`;

describe('the invoice email', () => {
  it('when an invoice is sent, then the customer receives it over SMTP from the business name, with the hosted page and PDF links and no internal notes; a re-send delivers it again', async () => {
    const c = await customer();
    const inv = await invoice(c.id, { description: 'March order' });
    const sent = await send(inv.id);
    const mail = await smtp.waitFor((m) => m.to.includes(c.email));
    expect(mail.subject).toBe(`Invoice ${sent.number} from Tea Room`);
    expect(mail.parsed.from?.value[0]).toMatchObject({ name: 'Tea Room' });
    expect(mail.text).toContain(sent.hosted_invoice_url);
    expect(mail.text).toContain(sent.invoice_pdf);
    expect(mail.html).toContain(sent.hosted_invoice_url);
    expect(mail.text).toContain('Oolong tea, 250 g');
    expect(mail.text).toContain('$24.00');
    expect(mail.raw).not.toContain('VIP');
    const [row] = await t.sql`select id, status from emails where related_object = ${inv.id} and template = 'invoice'`;
    expect(mail.emailId).toBe(row!.id);

    await send(inv.id);
    await eventually(async () => smtp.to(c.email).length === 2);
    expect(smtp.to(c.email).map((m) => m.subject)).toEqual([mail.subject, mail.subject]);
    expect(await eventsFor(t, inv.id)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent']);
  });
});

describe('reminders', () => {
  it('when an OPEN invoice comes due, then exactly the limit of reminders (2) arrive an interval apart, recorded and visible on the invoice', async () => {
    const c = await customer();
    const inv = await invoice(c.id, { due_date: inSeconds(2) });
    const sent = await send(inv.id);
    expect(sent.reminders).toEqual({ count: 0, last_sent_at: null, next_at: inv.due_date });

    const done = await eventually(async () => {
      const cur = await get(inv.id);
      return cur.reminders.count === 2 ? cur : null;
    });
    // The second was the last: none is planned after it, so no third can come.
    expect(done.reminders).toEqual({ count: 2, last_sent_at: expect.any(Number), next_at: null });
    expect(done.status).toBe('OPEN');
    const rows = await eventually(async () => {
      const r = await reminderRows(inv.id);
      return r.every((x) => x.status === 'SENT') ? r : null;
    });
    expect(rows.map((r) => r.dedupe_key)).toEqual([`invoice_reminder:${inv.id}:1`, `invoice_reminder:${inv.id}:2`]);
    await eventually(async () => smtp.to(c.email).length === 3);
    const mails = smtp.to(c.email);
    expect(mails[0]!.subject).toBe(`Invoice ${sent.number} from Tea Room`);
    expect(mails.slice(1).map((m) => m.subject)).toEqual([`Reminder: invoice ${sent.number} is overdue`, `Reminder: invoice ${sent.number} is overdue`]);
    expect(mails[2]!.text).toContain(sent.hosted_invoice_url);
    const [times] = await t.sql<{ gap_ms: number }[]>`
      select extract(epoch from (max(created_at) - min(created_at))) * 1000 as gap_ms
      from emails where related_object = ${inv.id} and template = 'invoice_reminder'`;
    expect(Number(times!.gap_ms)).toBeGreaterThanOrEqual(1000);
    // A duplicate or late job changes nothing.
    expect(await sendDueReminder(t.s, inv.id)).toBe('ended');
    expect((await get(inv.id)).reminders.count).toBe(2);
  });

  it('when an invoice is paid or voided before its reminder is due, then its reminder job finds nothing to do and no reminder is written', async () => {
    const jobs = await watchJobs(t.s.queues.get(QUEUE_NAMES.invoices), t.s.redis);
    try {
      const c = await customer();
      const paid = await invoice(c.id, { due_date: inSeconds(1) });
      const voided = await invoice(c.id, { due_date: inSeconds(1) });
      await send(paid.id);
      await send(voided.id);
      await t.sql.begin((tx) => addPayment(tx, paid.id, 2400));
      expect((await t.request('POST', `/v1/invoices/${voided.id}/void`, { key })).body.reminders.next_at).toBeNull();
      expect((await get(paid.id)).reminders.next_at).toBeNull();
      for (const inv of [paid, voided]) {
        expect(await jobs.outcome(reminderJobId(inv.id, 1))).toEqual({ state: 'completed', returnvalue: 'ended' });
        expect(await reminderRows(inv.id)).toEqual([]);
        expect((await get(inv.id)).reminders).toEqual({ count: 0, last_sent_at: null, next_at: null });
      }
    } finally {
      await jobs.close();
    }
  });

  it('when the reminder job is lost, then the repair pass sends the reminder, and the next one follows by its job', async () => {
    const c = await customer();
    const inv = await invoice(c.id, { due_date: inSeconds(86_400) });
    await send(inv.id);
    const queue = t.s.queues.get(QUEUE_NAMES.invoices);
    const jobId = reminderJobId(inv.id, 1);
    expect(await queue.getJobState(jobId)).toBe('delayed');
    // Redis loses the job; meanwhile the due date passes (the row is moved back rather than waiting a day).
    await queue.remove(jobId);
    expect(await t.s.redis.exists(`${queue.keys['']}${jobId}`)).toBe(0);
    await t.sql`update invoices set next_reminder_at = now() - interval '1 minute' where id = ${inv.id}`;

    expect(await reconcileReminders(t.s)).toBe(1);
    expect(await reconcileReminders(t.s)).toBe(0);
    expect((await get(inv.id)).reminders).toMatchObject({ count: 1, next_at: expect.any(Number) });
    const done = await eventually(async () => {
      const cur = await get(inv.id);
      return cur.reminders.count === 2 ? cur : null;
    });
    expect(done.reminders.next_at).toBeNull();
    await eventually(async () => smtp.to(c.email).filter((m) => m.subject.startsWith('Reminder')).length === 2);
    expect((await reminderRows(inv.id)).map((r) => r.dedupe_key)).toEqual([`invoice_reminder:${inv.id}:1`, `invoice_reminder:${inv.id}:2`]);
  });

  it('when an invoice has no due date, or is sent already overdue, then the first reminder is planned accordingly', async () => {
    const c = await customer();
    const noDue = await send((await invoice(c.id)).id);
    expect(noDue.reminders.next_at).toBeNull();
    const overdue = await invoice(c.id, { due_date: 1_600_000_000 });
    const sent = await send(overdue.id);
    // Already overdue when sent: the first reminder one interval (1 s) after the send, not the moment it arrives.
    expect(sent.reminders.next_at - sent.sent_at).toBe(1);
    // Due later: the first reminder at the due date.
    const later = await invoice(c.id, { due_date: inSeconds(3600) });
    expect((await send(later.id)).reminders.next_at).toBe(later.due_date);
  });
});
