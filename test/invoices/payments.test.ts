import { beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../src/checkout/service.ts';
import { newId } from '../../src/lib/ids.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { invoiceRow, payInvoice, sentInvoice } from './page-helpers.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const CARD_4242 = { number: DIGITS.visa, expMonth: 12, expYear: 2034, cvc: '123', name: 'Ada Lovelace' };
const CHANGED = 'The amount due on this invoice has changed';

/**
 * `n` checkout sessions of the invoice for `amount`, as the invoice page opens them (the page
 * hands the same session out again for the same amount, so distinct payers are made here), each
 * with a payer already on its card form.
 */
async function openSessions(t: TestServer, accountId: string, inv: { id: string; currency: string; customer_id: string; hosted_invoice_url: string }, amount: number, n: number) {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const cs = await createSession(
        t.s,
        { accountId, livemode: false },
        { amount, currency: inv.currency, success_url: `${inv.hosted_invoice_url}?paid={CHECKOUT_SESSION_ID}`, customer_id: inv.customer_id },
        { invoiceId: inv.id },
      );
      const payer = new Payer(t);
      await payer.get(`/checkout/${cs.id}`);
      return { payer, session: cs.id };
    }),
  );
}

const payments = (t: TestServer, invoiceId: string) =>
  t.sql<{ id: string; status: string; amount_cents: number; processing_since: Date | null; checkout_session_id: string }[]>`
    select id, status, amount_cents, processing_since, checkout_session_id from payments where invoice_id = ${invoiceId} order by id`;

describe('the last amount due, paid by many at once', () => {
  const t = useTestServer();
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    ({ test: key, accountId } = await t.account());
  });

  it('when 12 payers pay the last 4000 of 10000 at once (5 rounds), then exactly one succeeds, the others are refused uncharged, and invoice.paid fires once', async () => {
    for (let round = 0; round < 5; round++) {
      const inv = await sentInvoice(t, key, { allow_partial_payments: true, line_items: [{ name: 'Retainer', quantity: 1, amount: 10_000 }] });
      expect((await payInvoice(t, inv.hosted_invoice_url, '60.00')).paid.status).toBe(303);
      expect(await invoiceRow(t, inv.id)).toMatchObject({ amount_paid_cents: 6000, amount_due_cents: 4000 });

      const payers = await openSessions(t, accountId, inv, 4000, 12);
      const answers = await Promise.all(payers.map(({ payer, session }) => payer.pay(session)));
      const won = answers.filter((a) => a.status === 303);
      expect(won).toHaveLength(1);
      expect(won[0]!.location).toMatch(new RegExp(`\\?paid=cs_`));
      for (const a of answers.filter((x) => x.status !== 303)) {
        expect(a.status).toBe(409);
        // Refused while the winner was in flight (the amount is held) or after it was recorded (paid).
        expect(a.html).toMatch(new RegExp(`${CHANGED}|This invoice is paid\\.`));
      }

      const row = await invoiceRow(t, inv.id);
      expect(row).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000, amount_due_cents: 0 });
      const rows = await payments(t, inv.id);
      // Refused attempts were never recorded: nothing was charged, nothing is reserved.
      expect(rows.map((p) => [p.status, p.amount_cents])).toEqual([
        ['SUCCEEDED', 6000],
        ['SUCCEEDED', 4000],
      ]);
      expect(rows.every((p) => p.processing_since === null)).toBe(true);
      const types = (await eventObjects(t, inv.id)).map((e) => e.type);
      expect(types.filter((x) => x === 'invoice.paid')).toHaveLength(1);
      expect(types.filter((x) => x === 'invoice.updated')).toHaveLength(1);
      for (const p of rows) expect(await eventsFor(t, p.id)).toEqual(['payment.succeeded']);
    }
  });

  it('when full-amount sessions opened before a partial payment are paid after it, then each is refused uncharged; raced with fresh sessions of the due amount, exactly one of those succeeds', async () => {
    for (let round = 0; round < 3; round++) {
      const inv = await sentInvoice(t, key, { allow_partial_payments: true, line_items: [{ name: 'Retainer', quantity: 1, amount: 10_000 }] });
      const stale = await openSessions(t, accountId, inv, 10_000, 6);
      expect((await payInvoice(t, inv.hosted_invoice_url, '60')).paid.status).toBe(303);

      const fresh = await openSessions(t, accountId, inv, 4000, 6);
      const everyone = [...stale, ...fresh];
      const answers = await Promise.all(everyone.map(({ payer, session }) => payer.pay(session)));
      const staleAnswers = answers.slice(0, stale.length);
      const freshAnswers = answers.slice(stale.length);
      for (const a of staleAnswers) {
        expect(a.status).toBe(409);
        expect(a.html).toMatch(new RegExp(`${CHANGED}|This invoice is paid\\.`));
      }
      expect(freshAnswers.filter((a) => a.status === 303)).toHaveLength(1);
      expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000, amount_due_cents: 0 });
      expect((await payments(t, inv.id)).map((p) => [p.status, p.amount_cents])).toEqual([
        ['SUCCEEDED', 6000],
        ['SUCCEEDED', 4000],
      ]);
      expect((await eventObjects(t, inv.id)).filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
    }
  });

  it('when the attempt holding the last amount is declined, then its amount is free again and another payer can pay it', async () => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true, line_items: [{ name: 'Retainer', quantity: 1, amount: 10_000 }] });
    const [a, b] = await openSessions(t, accountId, inv, 10_000, 2);
    const declined = await a!.payer.pay(a!.session, { card_number: CARDS.declined });
    expect(declined.status).toBe(402);
    expect((await payments(t, inv.id)).map((p) => [p.status, p.processing_since])).toEqual([['FAILED', null]]);
    const paid = await b!.payer.pay(b!.session);
    expect(paid.status).toBe(303);
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
  });
});

describe('a crash between the charge and its record', () => {
  const t = useTestServer({ workers: [reconcileWorker as never], env: { RECONCILE_INTERVAL_MS: '1000' } });
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    ({ test: key, accountId } = await t.account());
  });

  /** What a crash leaves behind: the attempt committed PENDING and in flight (tx 1), tx 2 never run. */
  async function leftInFlight(sessionId: string) {
    const [cs] = await t.sql`select * from checkout_sessions where id = ${sessionId}`;
    const intent = await t.s.processors.test.createPaymentIntent({ reference: cs!.id, amount: cs!.amount_cents, currency: cs!.currency, customer: null, livemode: false });
    await t.sql`update checkout_sessions set payment_intent_id = ${intent.id} where id = ${sessionId}`;
    const id = newId('pay');
    await t.sql`
      insert into payments (id, account_id, livemode, amount_cents, currency, checkout_session_id, payment_intent_id,
        invoice_id, card_brand, card_last4, email, billing_name, processing_since)
      values (${id}, ${cs!.account_id}, false, ${cs!.amount_cents}, ${cs!.currency}, ${sessionId}, ${intent.id},
        ${cs!.invoice_id}, 'visa', '4242', 'payer@example.com', 'Ada Lovelace', now())`;
    return { id, intent: intent.id };
  }

  it('when an attempt of the last amount is in flight, then another payer is refused uncharged, and the swept success makes the invoice PAID once', async () => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true, line_items: [{ name: 'Retainer', quantity: 1, amount: 10_000 }] });
    expect((await payInvoice(t, inv.hosted_invoice_url, '60')).paid.status).toBe(303);
    const [first, second] = await openSessions(t, accountId, inv, 4000, 2);
    const { id, intent } = await leftInFlight(first!.session);

    const refused = await second!.payer.pay(second!.session);
    expect(refused.status).toBe(409);
    expect(refused.html).toContain(CHANGED);
    expect(await t.sql`select id from payments where checkout_session_id = ${second!.session}`).toEqual([]);

    await t.s.processors.test.confirmPaymentIntent(intent, id, CARD_4242);
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${id}`;
    await eventually(async () => (await invoiceRow(t, inv.id)).status === 'PAID', 15_000);
    expect(await invoiceRow(t, inv.id)).toMatchObject({ amount_paid_cents: 10_000, amount_due_cents: 0 });
    expect(await eventsFor(t, id)).toEqual(['payment.succeeded']);
    expect((await eventObjects(t, inv.id)).filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
  });

  it('when the processor never saw the attempt, then the sweeper fails it and the amount it held can be paid again', async () => {
    const inv = await sentInvoice(t, key, { line_items: [{ name: 'Retainer', quantity: 1, amount: 10_000 }] });
    const [first, second] = await openSessions(t, accountId, inv, 10_000, 2);
    const { id } = await leftInFlight(first!.session);
    expect((await second!.payer.pay(second!.session)).status).toBe(409);
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${id}`;
    await eventually(async () => (await t.sql`select status from payments where id = ${id}`)[0]!.status === 'FAILED', 15_000);
    expect((await second!.payer.pay(second!.session)).status).toBe(303);
    expect(await invoiceRow(t, inv.id)).toMatchObject({ status: 'PAID', amount_paid_cents: 10_000 });
  });
});
