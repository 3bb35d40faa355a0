import { beforeAll, describe, expect, it } from 'vitest';
import { emailWorker } from '../../workers/email.ts';
import { refundsWorker } from '../../workers/refunds.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { paidPayment, refund } from './helpers.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const smtp = useSmtp();
const t = useTestServer(() => ({ workers: [refundsWorker, emailWorker], env: { SMTP_URL: smtp.url } }));

let key: string;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  await t.sql`update accounts set business_name = 'Tea Room' where id = ${a.accountId}`;
});

const settled = (id: string) =>
  eventually(async () => {
    const r = (await t.request('GET', `/v1/refunds/${id}`, { key })).body;
    return r.status !== 'PENDING' ? r : null;
  }, 10_000);

describe('refund notice', () => {
  it('when two parts of a payment are refunded, then the payer gets one notice per refund with its amount, the total so far and the receipt link', async () => {
    const { paymentId, sessionId } = await paidPayment(t, key, { amount: 5000 });
    const first = (await refund(t, key, { payment_id: paymentId, amount: 1200 })).body;
    expect((await settled(first.id)).status).toBe('SUCCEEDED');
    const one = await smtp.waitFor((m) => m.text.includes(first.id));
    expect(one.subject).toBe('Refund from Tea Room');
    expect(one.to).toEqual(['payer@example.com']);
    expect(one.parsed.from?.value[0]?.name).toBe('Tea Room');
    expect(one.text).toContain('$12.00 was refunded to your Visa ending in 4242');
    expect(one.text).toContain('Refunded so far: $12.00');
    expect(one.text).toContain('Original payment: $50.00');
    expect(one.text).toContain(`${t.url}/checkout/${sessionId}/receipt`);
    expect(one.html).toContain('$12.00');
    expect(one.raw).not.toContain(DIGITS.visa);

    const second = (await refund(t, key, { payment_id: paymentId })).body;
    expect((await settled(second.id)).status).toBe('SUCCEEDED');
    const two = await smtp.waitFor((m) => m.text.includes(second.id));
    expect(two.text).toContain('$38.00 was refunded');
    expect(two.text).toContain('Refunded in full: $50.00');

    const rows = await t.sql`select template, related_object, dedupe_key from emails where related_object in ${t.sql([first.id, second.id])} order by id`;
    expect(rows).toEqual([
      { template: 'refund_notice', related_object: first.id, dedupe_key: `refund_notice:${first.id}` },
      { template: 'refund_notice', related_object: second.id, dedupe_key: `refund_notice:${second.id}` },
    ]);
  });

  it('when a refund fails at the processor, then no notice is written (only the receipt of the payment exists)', async () => {
    const { paymentId } = await paidPayment(t, key, { card: CARDS.refundFails });
    const r = (await refund(t, key, { payment_id: paymentId })).body;
    expect((await settled(r.id)).status).toBe('FAILED');
    expect(await t.sql`select id from emails where related_object = ${r.id}`).toEqual([]);
    expect((await t.sql`select template from emails where related_object = ${paymentId}`).map((e) => e.template)).toEqual(['receipt']);
  });
});
