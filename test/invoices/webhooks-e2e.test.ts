import { createHmac, timingSafeEqual } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { type ReceivedMail, useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createCustomer, payInvoice } from './page-helpers.ts';
import { createEndpoint } from '../helpers/factories.ts';
import { type Received, useReceiver } from '../helpers/receiver.ts';

/**
 * The "checked by", end to end: an invoice with part payments is sent, arrives by real
 * SMTP, is paid in two parts on the hosted page, and a webhook receiver that checks every
 * signature the way a merchant's server would sees `invoice.sent` and `invoice.paid` once each.
 */

/**
 * A merchant's verifier, written from README's "Verifying the signature" section only (not from
 * src/webhooks/signing.ts): `Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, v1 the
 * lowercase hex HMAC-SHA256 keyed by the whole `whsec_…` secret over `<t>.<raw body>`, and a
 * timestamp at most 5 minutes from our clock.
 */
function verifySignature(rawBody: string, header: unknown, secret: string, toleranceSeconds = 300): boolean {
  if (typeof header !== 'string') return false;
  const pairs = header.split(',').map((part) => {
    const at = part.indexOf('=');
    return at < 0 ? [part, ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
  const t = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest();
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v!) && timingSafeEqual(Buffer.from(v!, 'hex'), expected));
}

interface Delivered {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, any> };
}

const BUSINESS = 'Babbage & Lovelace Ltd';
const FROM = 'billing@shop.example';
const CUSTOMER_EMAIL = 'ada@example.com';
const PAYER_EMAIL = 'payer@example.com';

const smtp = useSmtp();
const rx = useReceiver();
const t = useTestServer(() => ({
  workers: true,
  env: { SMTP_URL: smtp.url, EMAIL_FROM: FROM, WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', RECONCILE_INTERVAL_MS: '1000' },
}));

describe('an invoice paid in two parts, end to end', () => {
  let key: string;
  let secret: string;
  beforeAll(async () => {
    const a = await t.account();
    key = a.test;
    const account = await t.request('POST', '/v1/account', { key: a.live, body: { business_name: BUSINESS } });
    expect(account.status).toBe(200);
    secret = (await createEndpoint(t, key, { url: `${rx.url}/hooks`, enabled_events: ['*'] })).signing_secret;
  });

  /** Every delivery so far, each checked with the merchant's verifier (a failed check fails the test). */
  const delivered = (): Delivered[] =>
    rx.received
      .filter((r) => r.path === '/hooks')
      .map((r: Received) => {
        if (!verifySignature(r.body, r.headers['service-signature'], secret)) throw new Error(`bad signature on ${r.headers['service-event-id']}: ${r.headers['service-signature']}`);
        const event = JSON.parse(r.body) as Delivered;
        expect(r.headers['service-event-id']).toBe(event.id);
        return event;
      });
  const ofType = (type: string) => delivered().filter((e) => e.type === type);
  const invoiceMails = (): ReceivedMail[] => smtp.to(CUSTOMER_EMAIL).filter((m) => m.subject.includes('INV-0001'));
  const receipts = (): ReceivedMail[] => smtp.to(PAYER_EMAIL).filter((m) => m.subject === `Receipt from ${BUSINESS}`);
  /** Resolves after two more reconcile passes have completed: any late duplicate would be out by then. */
  async function twoMoreRepairPasses() {
    const queue = t.s.queues.get('reconcile');
    const before = await queue.getCompletedCount();
    await eventually(async () => (await queue.getCompletedCount()) >= before + 2, 15_000, 100);
  }

  it('when the invoice is sent, paid 40.00, sent again, and paid 60.00 on the hosted page, then the emails arrive over SMTP and invoice.sent and invoice.paid are each delivered once, signed', async () => {
    const customer = await createCustomer(t, key, { email: CUSTOMER_EMAIL });
    const created = await t.request('POST', '/v1/invoices', {
      key,
      body: {
        customer_id: customer.id,
        currency: 'usd',
        description: 'Retainer, March',
        due_date: Math.floor(Date.now() / 1000) + 14 * 86_400,
        line_items: [{ name: 'Retainer', quantity: 1, amount: 10_000 }],
        allow_partial_payments: true,
        minimum_payment_cents: 1000,
      },
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;

    // Sent: the email arrives from the business, with the hosted page's link in both parts.
    const sent = await t.request('POST', `/v1/invoices/${id}/send`, { key });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'OPEN', number: 'INV-0001', amount_due_cents: 10_000 });
    const url = sent.body.hosted_invoice_url as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/invoices\/[A-Za-z0-9_-]{32}$/);
    const mail = await eventually(async () => invoiceMails()[0]);
    expect(mail.parsed.from?.value[0]).toEqual({ name: BUSINESS, address: FROM });
    expect(mail.subject).toBe(`Invoice INV-0001 from ${BUSINESS}`);
    expect(mail.text).toContain(url);
    expect(mail.html).toContain(`href="${url}"`);
    expect(mail.raw).not.toContain('SECRET-NOTE');
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('INV-0001');
    await eventually(async () => ofType('invoice.sent').length === 1);

    // Paid in two parts through the hosted page and the hosted checkout (card 4242).
    const first = await payInvoice(t, url, '40.00');
    expect(first.posted.status).toBe(303);
    expect(first.paid.status).toBe(303);
    expect((await t.request('GET', `/v1/invoices/${id}`, { key })).body).toMatchObject({ status: 'OPEN', amount_paid_cents: 4000, amount_due_cents: 6000 });

    // Sent again while 60.00 is still due: a second email, and (checked below) no second invoice.sent.
    const again = await t.request('POST', `/v1/invoices/${id}/send`, { key });
    expect(again.status).toBe(200);
    expect(again.body.sent_at).toBe(sent.body.sent_at);
    const resent = await eventually(async () => invoiceMails()[1]);
    expect(resent.text).toContain(url);
    expect(resent.text).toContain('$60.00');

    const second = await payInvoice(t, url, '60.00');
    expect(second.paid.status).toBe(303);
    const paidInvoice = (await t.request('GET', `/v1/invoices/${id}`, { key })).body;
    expect(paidInvoice).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000, amount_due_cents: 0 });

    // A paid invoice is not sent again.
    const refused = await t.request('POST', `/v1/invoices/${id}/send`, { key });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('resource_invalid_state');

    await eventually(async () => receipts().length === 2);
    await eventually(async () => ofType('invoice.paid').length === 1 && ofType('payment.succeeded').length === 2);
    await eventually(async () => (await t.sql`select 1 from webhook_deliveries where status <> 'SUCCEEDED'`).length === 0);
    await twoMoreRepairPasses();

    // At the receiver: each event once, every one signed with the endpoint's secret.
    const [sentEvent] = ofType('invoice.sent');
    const [updated, ...moreUpdated] = ofType('invoice.updated');
    const [paidEvent, ...morePaid] = ofType('invoice.paid');
    expect(ofType('invoice.sent')).toHaveLength(1);
    expect(morePaid).toHaveLength(0);
    expect(moreUpdated).toHaveLength(0);
    expect(sentEvent!.data.object).toMatchObject({ id, status: 'OPEN', number: 'INV-0001', hosted_invoice_url: url, amount_due_cents: 10_000 });
    // The one part payment in between: OPEN, 4000 of 10000 paid.
    expect(updated!.data.object).toMatchObject({ id, status: 'OPEN', amount_paid_cents: 4000, amount_due_cents: 6000 });
    expect(paidEvent!.data.object).toMatchObject({ id, status: 'PAID', amount_due_cents: 0, amount_paid_cents: 10_000, paid_at: paidInvoice.paid_at });
    expect(sentEvent!.created).toBeLessThanOrEqual(updated!.created);
    expect(updated!.created).toBeLessThanOrEqual(paidEvent!.created);
    const payments = ofType('payment.succeeded').map((e) => e.data.object);
    expect(payments.map((p) => [p.invoice_id, p.amount_cents]).sort((a, b) => a[1] - b[1])).toEqual([
      [id, 4000],
      [id, 6000],
    ]);
    expect(new Set(delivered().map((e) => e.id)).size).toBe(delivered().length);

    // The mails after the duplicates' wait: two invoice emails, one receipt per payment naming the invoice.
    expect(invoiceMails()).toHaveLength(2);
    const got = receipts();
    expect(got).toHaveLength(2);
    for (const receipt of got) {
      expect(receipt.text).toContain('INV-0001');
      expect(receipt.html).toContain('INV-0001');
      expect(receipt.raw).not.toMatch(/4242[ -]?4242[ -]?4242[ -]?4242|SECRET-NOTE/);
    }
    expect(got.map((r) => payments.find((p) => r.text.includes(p.id))?.amount_cents).sort((a, b) => a - b)).toEqual([4000, 6000]);
  });

  it('when a delivery is altered or checked with another secret, then the verifier refuses it', async () => {
    const r = rx.received.find((x) => x.path === '/hooks');
    expect(r).toBeDefined();
    const header = r!.headers['service-signature'];
    expect(verifySignature(r!.body, header, secret)).toBe(true);
    expect(verifySignature(`${r!.body} `, header, secret)).toBe(false);
    expect(verifySignature(r!.body, header, `${secret}x`)).toBe(false);
    // The same v1 under a fresh timestamp (a replay made to look new), and the real one grown stale.
    expect(verifySignature(r!.body, String(header).replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000)}`), secret)).toBe(false);
    const t0 = Number(/t=(\d+)/.exec(String(header))![1]);
    expect(verifySignature(r!.body, header, secret, Math.floor(Date.now() / 1000) - t0 - 2)).toBe(false);
  });
});
