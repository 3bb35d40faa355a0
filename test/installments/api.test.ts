import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { choosePlan, createInstallmentLink, eventTypes, partsOf, paymentsOfPlan, planRow, startPlan } from './helpers.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

// Plans from a link page: the options offered and validated, the plan created with its first part
// (and only then), the object, the list and its filters, cancel, and isolation between accounts
// and modes. The charges of later parts are in charging.test.ts, the dunning in dunning.test.ts.

const t = useTestServer();
let key: string;
let live: string;
let other: string;
beforeAll(async () => {
  ({ test: key, live } = await t.account());
  other = (await t.account()).test;
});

describe('installment options of links and invoices', () => {
  it('when a link enables installments without options, then the object shows the default: 3 monthly payments', async () => {
    const link = await createInstallmentLink(t, key);
    expect(link).toMatchObject({ installment_enabled: true, installment_options: [{ count: 3, interval: 'month' }] });
    const patched = await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { installment_options: [{ count: 2, interval: 'week' }, { count: 6, interval: 'month' }] } });
    expect(patched.body.installment_options).toEqual([{ count: 2, interval: 'week' }, { count: 6, interval: 'month' }]);
    const page = await new Payer(t).get(pathOf(link.url));
    expect(page.html).toContain('2 weekly payments');
    expect(page.html).toContain('6 monthly payments');
    expect(page.html).not.toContain('3 monthly payments');
  });

  it.each([
    [{ installment_options: [{ count: 1, interval: 'month' }] }, 'installment_options[0][count]'],
    [{ installment_options: [{ count: 25, interval: 'month' }] }, 'installment_options[0][count]'],
    [{ installment_options: [{ count: 3, interval: 'year' }] }, 'installment_options[0][interval]'],
    [{ installment_options: [] }, 'installment_options'],
    [{ installment_options: [{ count: 3, interval: 'month' }, { count: 3, interval: 'month' }] }, 'installment_options'],
    [{ installment_options: 'monthly' }, 'installment_options'],
  ])('when a link is created with %j, then 400 naming %s', async (body, param) => {
    const res = await t.request('POST', '/v1/payment-links', { key, body: { amount: 1000, currency: 'usd', installment_enabled: true, ...body } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  it('when an invoice allows installments, then its object says so and validates its options the same way', async () => {
    const customer = (await t.request('POST', '/v1/customers', { key, body: { email: 'grace@example.com' } })).body;
    const ok = await t.request('POST', '/v1/invoices', { key, body: { customer_id: customer.id, currency: 'usd', allow_installments: true, installment_options: [{ count: 4, interval: 'week' }] } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ allow_installments: true, installment_options: [{ count: 4, interval: 'week' }] });
    const bad = await t.request('POST', '/v1/invoices', { key, body: { customer_id: customer.id, currency: 'usd', installment_options: [{ count: 30, interval: 'week' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('installment_options[0][count]');
  });

  it('when installments are not enabled, then the page offers none and a posted plan is read as paying in full', async () => {
    const link = await createInstallmentLink(t, key, { installment_enabled: false });
    const { sessionId } = await choosePlan(t, link.url);
    const [session] = await t.sql`select amount_cents, installment from checkout_sessions where id = ${sessionId}`;
    expect(session).toMatchObject({ amount_cents: 10000, installment: null });
  });
});

describe('choosing a plan on the link page', () => {
  it('when a payer chooses a plan without ticking the box or without an email, then the page says which, and no session opens', async () => {
    const link = await createInstallmentLink(t, key);
    const noTick = await choosePlan(t, link.url, { agree: '' });
    expect(noTick.answer.status).toBe(400);
    expect(noTick.answer.html).toContain('Tick the box to agree');
    const noEmail = await choosePlan(t, link.url, { email: '' });
    expect(noEmail.answer.status).toBe(400);
    expect(noEmail.answer.html).toContain('a payment plan needs it');
    expect(noEmail.answer.html).toMatch(/value="3-month" checked/);
    const unknown = await choosePlan(t, link.url, { plan: '7-month' });
    expect(unknown.answer.status).toBe(400);
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(0);
  });

  it('when a plan is chosen, then the checkout charges only the first part, says "Payment 1 of 3" with every date, and a declined first part leaves no plan', async () => {
    const link = await createInstallmentLink(t, key);
    const { payer, sessionId, checkout } = await choosePlan(t, link.url);
    expect(checkout!.html).toContain('Payment 1 of 3');
    expect(checkout!.html).toContain('$33.34');
    expect(checkout!.html).toContain('Pay $33.34');
    const [session] = await t.sql`select amount_cents, customer_email, installment from checkout_sessions where id = ${sessionId}`;
    expect(session).toMatchObject({ amount_cents: 3334, customer_email: 'ada@example.com', installment: { kind: 'plan', count: 3, interval: 'month', total_cents: 10000 } });
    expect(session!.installment.agreement).toMatchObject({ ip: '127.0.0.1', text: expect.stringContaining('$33.34 today and $33.33 on each of') });

    const declined = await payer.pay(sessionId!, { card_number: CARDS.declined });
    expect(declined.status).toBe(402);
    expect(await t.sql`select 1 from installment_plans where checkout_session_id = ${sessionId}`).toHaveLength(0);
    const [failed] = await t.sql`select installment_plan_id from payments where checkout_session_id = ${sessionId}`;
    expect(failed!.installment_plan_id).toBeNull();
  });

  it('when the first part is paid, then the plan is ACTIVE with the card kept at the processor, a new customer made for the payer, and installment_plan.created', async () => {
    const link = await createInstallmentLink(t, key, { description: 'Wheel throwing, 6 weeks' });
    const { plan, paid, sessionId } = await startPlan(t, link.url, CARDS.visa, { email: 'Potter@Example.com' });
    expect(paid.status).toBe(303);
    expect(plan).toMatchObject({ status: 'ACTIVE', count: 3, interval: 'month', total_cents: 10000, payment_link_id: link.id, email: 'Potter@Example.com', card_last4: '4242' });
    // The simulator's reusable token, never the card number.
    expect(plan!.processor_payment_method).toMatch(/^pm_sim_[0-9a-f]{24}$/);
    const [pm] = await t.sql`select * from simulator_payment_methods where id = ${plan!.processor_payment_method}`;
    expect(Object.keys(pm!).sort()).toEqual(['behaviour', 'brand', 'created_at', 'id', 'last4', 'livemode']);
    expect(JSON.stringify(pm)).not.toContain(DIGITS.visa);

    const [customer] = await t.sql`select * from customers where id = ${plan!.customer_id}`;
    expect(customer).toMatchObject({ email: 'Potter@Example.com', first_name: 'Ada', last_name: 'Lovelace' });
    const [first] = await paymentsOfPlan(t, plan!.id);
    // The first part belongs to the plan's customer like every later part: the payment, its session and both events say so.
    expect(first).toMatchObject({ status: 'SUCCEEDED', amount_cents: 3334, checkout_session_id: sessionId, installment_number: 1, customer_id: plan!.customer_id });
    expect((await t.sql`select customer_id from checkout_sessions where id = ${sessionId}`)[0]!.customer_id).toBe(plan!.customer_id);
    expect(await eventTypes(t, plan!.id)).toEqual(['installment_plan.created']);
    const [event] = await t.sql`select data from events where type = 'payment.succeeded' and data->'object'->>'id' = ${first!.id}`;
    expect(event!.data.object).toMatchObject({ installment_plan_id: plan!.id, installment_number: 1, customer_id: plan!.customer_id });
    const [completed] = await t.sql`select data from events where type = 'checkout.session.completed' and data->'object'->>'id' = ${sessionId}`;
    expect(completed!.data.object.customer_id).toBe(plan!.customer_id);

    const parts = await partsOf(t, plan!.id);
    expect(parts.map((p) => [p.number, p.amount_cents, p.status, p.attempt_count])).toEqual([
      [1, 3334, 'PAID', 1],
      [2, 3333, 'SCHEDULED', 0],
      [3, 3333, 'SCHEDULED', 0],
    ]);
    const paidAt = first!.succeeded_at as Date;
    expect(parts[0]!.due_at.getTime()).toBe(paidAt.getTime());
    expect(parts[1]!.due_at.getUTCMonth()).toBe((paidAt.getUTCMonth() + 1) % 12);

    // A second plan with the same email (any case) is a customer of its own: a typed email never selects a customer (issue 21).
    const again = await startPlan(t, link.url, CARDS.visa, { email: 'potter@example.com' });
    expect(again.plan!.customer_id).not.toBe(plan!.customer_id);
  });
});

describe('GET, list and cancel', () => {
  it('when read, then the object has every field of the issue and the parts add up to the total', async () => {
    const link = await createInstallmentLink(t, key, { amount: 10001, installment_options: [{ count: 4, interval: 'week' }] });
    const { plan } = await startPlan(t, link.url, CARDS.visa, { plan: '4-week' });
    const res = await t.request('GET', `/v1/installment-plans/${plan!.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: plan!.id,
      object: 'installment_plan',
      livemode: false,
      customer_id: plan!.customer_id,
      payment_link_id: link.id,
      invoice_id: null,
      currency: 'usd',
      total_cents: 10001,
      amount_paid_cents: 2501,
      count: 4,
      interval: 'week',
      status: 'ACTIVE',
      card: { brand: 'visa', last4: '4242' },
      metadata: {},
    });
    expect(res.body.installments.map((p: { amount_cents: number }) => p.amount_cents)).toEqual([2501, 2500, 2500, 2500]);
    const due = res.body.installments.map((p: { due_at: number }) => p.due_at);
    expect(due[1] - due[0]).toBe(7 * 86400);
    expect(res.body.installments[0]).toEqual({ number: 1, amount_cents: 2501, due_at: due[0], status: 'PAID', next_attempt_at: null, attempt_count: 1, payment_id: expect.stringMatching(/^pay_/) });
    expect(res.body.installments[1]).toMatchObject({ status: 'SCHEDULED', next_attempt_at: due[1], attempt_count: 0, payment_id: null });
    expect(res.body.agreement).toEqual({ text: expect.stringContaining('I authorise'), agreed_at: expect.any(Number), ip_address: '127.0.0.1' });
  });

  it('when listed, then newest first with cursors, and the filters customer_id (or customer), status, payment_link_id and invoice_id apply', async () => {
    // The plans of a link attached to a customer are that customer's, whoever pays; one of a plain link is a new customer's.
    const lister = (await t.request('POST', '/v1/customers', { key, body: { email: 'lister@example.com' } })).body;
    const link = await createInstallmentLink(t, key, { customer_id: lister.id });
    const a = (await startPlan(t, link.url, CARDS.visa, { email: 'lister@example.com' })).plan!;
    const b = (await startPlan(t, link.url, CARDS.visa, { email: 'lister@example.com' })).plan!;
    const c = (await startPlan(t, link.url, CARDS.visa, { email: 'other-lister@example.com' })).plan!;
    const d = (await startPlan(t, (await createInstallmentLink(t, key)).url, CARDS.visa, { email: 'lister@example.com' })).plan!;
    const list = async (q: string) => (await t.request('GET', `/v1/installment-plans?${q}`, { key })).body;
    expect((await list(`payment_link_id=${link.id}`)).data.map((p: { id: string }) => p.id)).toEqual([c.id, b.id, a.id]);
    const page1 = await list(`payment_link_id=${link.id}&limit=2`);
    expect(page1.has_more).toBe(true);
    expect((await list(`payment_link_id=${link.id}&limit=2&starting_after=${page1.data[1].id}`)).data.map((p: { id: string }) => p.id)).toEqual([a.id]);
    expect(a.customer_id).toBe(lister.id);
    expect(d.customer_id).not.toBe(lister.id);
    expect((await list(`customer_id=${lister.id}`)).data.map((p: { id: string }) => p.id)).toEqual([c.id, b.id, a.id]);
    expect((await list(`customer=${d.customer_id}`)).data.map((p: { id: string }) => p.id)).toEqual([d.id]);
    await t.request('POST', `/v1/installment-plans/${b.id}/cancel`, { key });
    expect((await list(`payment_link_id=${link.id}&status=CANCELLED`)).data.map((p: { id: string }) => p.id)).toEqual([b.id]);
    expect((await list(`invoice_id=in_01m89emrkt0006k689spej1tdy0e8`)).data).toEqual([]);
    const bad = await t.request('GET', '/v1/installment-plans?status=PAID', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status');
    expect((await t.request('GET', `/v1/installment-plans?customer=${a.customer_id}&customer_id=cus_x`, { key })).status).toBe(400);
  });

  it('when metadata is set, then it is merged key by key in any status, validated, and nothing else of the plan changes', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const path = `/v1/installment-plans/${plan!.id}`;
    const set = await t.request('PATCH', path, { key, body: { metadata: { order: '1042', team: 'kiln' } } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: plan!.id, status: 'ACTIVE', metadata: { order: '1042', team: 'kiln' } });
    const merged = await t.request('PATCH', path, { key, body: { metadata: { team: null, note: 'vip' } } });
    expect(merged.body.metadata).toEqual({ order: '1042', note: 'vip' });
    expect((await t.request('GET', path, { key })).body.metadata).toEqual({ order: '1042', note: 'vip' });
    expect(merged.body.installments).toEqual(set.body.installments);
    // Only metadata: the schedule is the payer's agreement.
    const refused = await t.request('PATCH', path, { key, body: { total_cents: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'parameter_unknown', param: 'total_cents' });
    const tooLong = await t.request('PATCH', path, { key, body: { metadata: { k: 'x'.repeat(501) } } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.param).toMatch(/^metadata/);
    await t.request('POST', `${path}/cancel`, { key });
    const after = await t.request('PATCH', path, { key, body: { metadata: null } });
    expect(after.body).toMatchObject({ status: 'CANCELLED', metadata: {} });
    expect(await eventTypes(t, plan!.id)).toEqual(['installment_plan.created', 'installment_plan.cancelled']);
    const other = await t.account();
    expect((await t.request('PATCH', path, { key: other.test, body: { metadata: { a: 'b' } } })).status).toBe(404);
  });

  it('when an ACTIVE plan is cancelled, then its unpaid parts are CANCELLED with installment_plan.cancelled; a second cancel is a 400', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const res = await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CANCELLED', cancelled_at: expect.any(Number), amount_paid_cents: 3334 });
    expect(res.body.installments.map((p: { status: string }) => p.status)).toEqual(['PAID', 'CANCELLED', 'CANCELLED']);
    expect(res.body.installments.every((p: { next_attempt_at: number | null }) => p.next_attempt_at === null)).toBe(true);
    expect(await eventTypes(t, plan!.id)).toEqual(['installment_plan.created', 'installment_plan.cancelled']);
    const again = await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('resource_invalid_state');
    expect((await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key, body: { reason: 'x' } })).body.error).toMatchObject({ code: 'parameter_unknown', param: 'reason' });
  });

  it('when a charge of the plan is in flight, then cancel answers 400 and the plan stays ACTIVE', async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    await t.sql`insert into payments (id, account_id, livemode, amount_cents, currency, installment_plan_id, installment_number, processing_since)
      values ('pay_01m8inflight000000000000000', ${plan!.account_id}, false, 3333, 'usd', ${plan!.id}, 2, now())`;
    const res = await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('in progress');
    expect((await planRow(t, plan!.id)).status).toBe('ACTIVE');
    await t.sql`delete from payments where id = 'pay_01m8inflight000000000000000'`;
  });

  it("when another account's plan, or a test plan with a live key, is asked for, then 404 exactly as a missing one", async () => {
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    for (const k of [other, live]) {
      const got = await t.request('GET', `/v1/installment-plans/${plan!.id}`, { key: k });
      expect(got.status).toBe(404);
      expect(got.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
      expect((await t.request('POST', `/v1/installment-plans/${plan!.id}/cancel`, { key: k })).status).toBe(404);
      expect((await t.request('GET', `/v1/installment-plans?payment_link_id=${link.id}`, { key: k })).body.data).toEqual([]);
    }
    expect((await t.request('GET', '/v1/installment-plans/ip_nope', { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/installment-plans')).status).toBe(401);
    expect((await planRow(t, plan!.id)).status).toBe('ACTIVE');
  });
});
