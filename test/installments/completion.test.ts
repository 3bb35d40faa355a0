import { beforeAll, describe, expect, it } from 'vitest';
import { pathOf, Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createInstallmentLink, eventTypes, partsOf, paymentsOfPlan, startPlan } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

// The running service (web and every worker) with test plans on a 1-second interval
// (INSTALLMENT_TEST_INTERVAL_SECONDS): a link's plan and an invoice's plan are paid to completion
// by the charge jobs alone, with the link's counters and the invoice's amount due checked on the way.

const t = useTestServer({ workers: true, env: { INSTALLMENT_TEST_INTERVAL_SECONDS: '1', INSTALLMENT_TEST_RETRY_SECONDS: '1' } });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const planStatus = async (id: string) => (await t.sql`select status from installment_plans where id = ${id}`)[0]!.status as string;

describe('plans paid to completion on a shortened interval', () => {
  it('when a link plan of 3 is started, then the jobs charge parts 2 and 3 a second apart, the plan COMPLETES, and the link counts one payment of the whole amount', async () => {
    const link = await createInstallmentLink(t, key, { quantity_limit: 5 });
    const { plan } = await startPlan(t, link.url, CARDS.visa, { email: 'finisher@example.com' });
    expect(plan!.test_interval_seconds).toBe(1);
    await eventually(async () => (await planStatus(plan!.id)) === 'COMPLETED', 20_000);

    const payments = await paymentsOfPlan(t, plan!.id);
    expect(payments.map((p) => [p.status, p.amount_cents, p.installment_number])).toEqual([
      ['SUCCEEDED', 3334, 1],
      ['SUCCEEDED', 3333, 2],
      ['SUCCEEDED', 3333, 3],
    ]);
    // Later parts: no session, the plan's customer, link and source, a description naming the part.
    expect(payments[1]).toMatchObject({ checkout_session_id: null, customer_id: plan!.customer_id, payment_link_id: link.id, link_source: 'DIRECT', description: 'Pottery course (payment 2 of 3)' });
    expect(payments[1]!.payment_intent_id).toMatch(/^pi_/);
    const parts = await partsOf(t, plan!.id);
    expect(parts.map((p) => p.status)).toEqual(['PAID', 'PAID', 'PAID']);
    expect(parts[2]!.due_at.getTime() - parts[1]!.due_at.getTime()).toBe(1000);
    expect(await eventTypes(t, plan!.id)).toEqual(['installment_plan.created', 'installment_plan.completed']);
    for (const p of payments) expect(await eventTypes(t, p.id as string)).toEqual(['payment.succeeded']);

    // Counted once toward payment_count and quantity_limit; the amount collected grows part by part.
    const link2 = await eventually(async () => {
      const [row] = await t.sql`select payment_count, total_collected_cents from payment_links where id = ${link.id}`;
      return Number(row!.total_collected_cents) === 10000 ? row : null;
    });
    expect(link2).toMatchObject({ payment_count: 1 });
    const analytics = (await t.request('GET', `/v1/payment-links/${link.id}/analytics`, { key })).body;
    expect(analytics).toMatchObject({ payments: 1, amount_collected_cents: 10000 });
    expect(analytics.sources.find((s: { source: string }) => s.source === 'DIRECT')).toMatchObject({ payments: 1, amount_collected_cents: 10000 });
    // A receipt per part.
    await eventually(async () => (await t.sql`select count(*)::int as n from emails where template = 'receipt' and to_address = 'finisher@example.com'`)[0]!.n === 3);
    const got = (await t.request('GET', `/v1/payments/${payments[2]!.id}`, { key })).body;
    expect(got).toMatchObject({ installment_plan_id: plan!.id, installment_number: 3, checkout_session_id: null, receipt_url: null, card: { brand: 'visa', last4: '4242' } });
  });

  it('when an invoice is paid by a plan from its hosted page, then its amount due falls part by part and invoice.paid fires once, with the last part', async () => {
    const customer = (await t.request('POST', '/v1/customers', { key, body: { email: 'bill@example.com', first_name: 'Bill' } })).body;
    const created = await t.request('POST', '/v1/invoices', {
      key,
      body: { customer_id: customer.id, currency: 'usd', line_items: [{ name: 'Kiln hire', quantity: 1, amount: 9001 }], allow_installments: true, due_date: Math.floor(Date.now() / 1000) + 86400 },
    });
    const inv = (await t.request('POST', `/v1/invoices/${created.body.id}/send`, { key })).body;
    const payer = new Payer(t);
    const page = await payer.get(pathOf(inv.hosted_invoice_url));
    expect(page.html).toContain('3 monthly payments');
    const posted = await payer.post(`${pathOf(inv.hosted_invoice_url)}/pay`, { plan: '3-month', agree: 'yes' });
    expect(posted.status).toBe(303);
    const sessionId = /\/(cs_[0-9a-z]+)/.exec(posted.location!)![1]!;
    const checkout = await payer.get(pathOf(posted.location!));
    expect(checkout.html).toContain('Payment 1 of 3');
    expect((await payer.pay(sessionId, { email: 'bill@example.com' })).status).toBe(303);

    const [plan] = await t.sql`select * from installment_plans where checkout_session_id = ${sessionId}`;
    expect(plan).toMatchObject({ invoice_id: inv.id, customer_id: customer.id, total_cents: 9001, email: 'bill@example.com' });
    await eventually(async () => (await planStatus(plan!.id)) === 'COMPLETED', 20_000);

    const invoice = (await t.request('GET', `/v1/invoices/${inv.id}`, { key })).body;
    expect(invoice).toMatchObject({ status: 'PAID', amount_paid_cents: 9001, amount_due_cents: 0, reminders: { next_at: null } });
    const events = await t.sql<{ type: string; due: string }[]>`
      select type, data->'object'->>'amount_due_cents' as due from events where data->'object'->>'id' = ${inv.id} order by id`;
    expect(events.map((e) => `${e.type}:${e.due}`)).toEqual([
      'invoice.created:9001',
      'invoice.finalized:9001',
      'invoice.sent:9001',
      'invoice.updated:6000',
      'invoice.updated:3000',
      'invoice.paid:0',
    ]);
    const payments = await paymentsOfPlan(t, plan!.id);
    expect(payments.map((p) => [p.amount_cents, p.invoice_id])).toEqual([
      [3001, inv.id],
      [3000, inv.id],
      [3000, inv.id],
    ]);
    // The page shows the invoice paid, and no form.
    const after = await new Payer(t).get(pathOf(inv.hosted_invoice_url));
    expect(after.html).toContain('This invoice is paid');
    expect(after.html).not.toContain('<form');
  });
});
