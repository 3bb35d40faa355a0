import { beforeAll, describe, expect, it } from 'vitest';
import { emailWorker } from '../../workers/email.ts';
import { useTestServer } from '../helpers/server.ts';
import { Payer } from '../helpers/payer.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createSession, teaRoomOrder } from './helpers.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

// A checkout payment sends its receipt over real SMTP (an in-process server) through the email worker.

const smtp = useSmtp();
const t = useTestServer(() => ({ workers: [emailWorker], env: { SMTP_URL: smtp.url, EMAIL_FROM: 'receipts@tea.example' } }));

let key: string;
let accountId: string;
beforeAll(async () => {
  ({ test: key, accountId } = await t.account());
  await t.sql`update accounts set business_name = 'Tea Room' where id = ${accountId}`;
});

const NOTES = 'Prefers oolong; door code 4471; VIP';

describe('receipt email after a hosted checkout payment', () => {
  it('when a payer pays a session with items, then one receipt arrives over SMTP from the business name with amount, items, date, brand, last four and a working receipt link, and nothing secret', async () => {
    const customer = (await t.request('POST', '/v1/customers', { key, body: { email: 'ada@example.com', first_name: 'Ada', notes: NOTES } })).body;
    const cs = await createSession(t, key, { ...teaRoomOrder('https://merchant.example'), customer_id: customer.id });
    const pay = await new Payer(t).pay(cs.id, { email: 'payer@example.com' });
    expect(pay.status).toBe(303);
    const paymentId = (await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body.payment_id as string;

    const mail = await smtp.waitFor((m) => m.subject === 'Receipt from Tea Room' && m.text.includes(paymentId));
    // The address typed on the page comes first (before customer_email and the customer's).
    expect(mail.to).toEqual(['payer@example.com']);
    expect(mail.parsed.from?.value).toEqual([{ name: 'Tea Room', address: 'receipts@tea.example' }]);
    expect(mail.emailId).toMatch(/^em_/);
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain('$49.00');
      expect(part).toContain('Loose-leaf green tea, 100 g');
      expect(part).toContain('Ceramic teapot');
      expect(part).toContain('Visa ending in 4242');
      expect(part).toContain(new Date().toLocaleString('en-US', { dateStyle: 'long', timeZone: 'UTC' }));
    }
    expect(mail.html).toMatch(/^<!doctype html>/);
    // Never the card number (with or without spaces), the CVC line or the customer's notes.
    for (const part of [mail.raw, mail.text, mail.html]) {
      expect(part).not.toContain(DIGITS.visa);
      expect(part).not.toContain(CARDS.visa);
      expect(part).not.toContain('door code');
    }

    const link = `${t.url}/checkout/${cs.id}/receipt`;
    expect(mail.text).toContain(link);
    expect(mail.html).toContain(`href="${link}"`);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(paymentId);

    // The row says how it went, and the API lists it under the payment.
    const row = await eventually(async () => {
      const [r] = await t.sql`select * from emails where related_object = ${paymentId}`;
      return r?.status === 'SENT' ? r : null;
    });
    expect(row).toMatchObject({ template: 'receipt', to_address: 'payer@example.com', attempts: 1, transport: 'smtp', last_error: null, dedupe_key: `receipt:${paymentId}` });
    expect(row.message_id).toBe(mail.parsed.messageId);
    const list = (await t.request('GET', `/v1/emails?related_object=${paymentId}`, { key })).body;
    expect(list.data.map((e: { id: string }) => e.id)).toEqual([mail.emailId]);
    expect(list.data[0]).toMatchObject({ object: 'email', status: 'SENT', template: 'receipt', to: 'payer@example.com', subject: 'Receipt from Tea Room' });
    expect(smtp.received.filter((m) => m.text.includes(paymentId))).toHaveLength(1);
  });

  it('when a session has only an amount and the account no business name, then the receipt says "Your receipt", shows the description as its one line, and comes from the bare address', async () => {
    const other = await t.account();
    const cs = await createSession(t, other.test, { amount: 2500, description: 'Gift card <b>for Ada</b>' });
    expect((await new Payer(t).pay(cs.id, { email: 'gift@example.com' })).status).toBe(303);
    const mail = await smtp.waitFor((m) => m.to.includes('gift@example.com'));
    expect(mail.subject).toBe('Your receipt');
    expect(mail.parsed.from?.value).toEqual([{ name: '', address: 'receipts@tea.example' }]);
    expect(mail.text).toContain('1 × Gift card <b>for Ada</b>: $25.00');
    expect(mail.html).toContain('Gift card &lt;b&gt;for Ada&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>for Ada</b>');
  });
});
