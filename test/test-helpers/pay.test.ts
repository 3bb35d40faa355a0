import { beforeAll, describe, expect, it } from 'vitest';
import { pathOf, Payer, payInvoice, startPayment } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, createLink, createSession, sentInvoice } from '../helpers/factories.ts';
import { useReceiver } from '../helpers/receiver.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

// Every worker (deliveries, receipts, the disputes sync) and a local test-mode webhook endpoint
// (WEBHOOK_TEST_LOCAL_TARGETS): what the helper causes is compared with what the hosted page causes.
const rx = useReceiver();
const t = useTestServer({ workers: true, env: { WEBHOOK_TEST_LOCAL_TARGETS: 'true' } });

let key: string;
let live: string;
beforeAll(async () => {
  const a = await t.account();
  key = a.test;
  live = a.live;
  await createEndpoint(t, key, { url: `${rx.url}/hooks` });
});

const pay = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', `/v1/test-helpers/checkout/sessions/${id}/pay`, { key, body, headers });
const getSession = async (id: string) => (await t.request('GET', `/v1/checkout/sessions/${id}`, { key })).body;
const getPayment = async (id: string) => (await t.request('GET', `/v1/payments/${id}`, { key })).body;

/** What paying a session left behind, without ids and times: to compare the helper with the page. */
async function footprint(sessionId: string) {
  const events = await t.sql<{ type: string; data: { object: Record<string, unknown> } }[]>`
    select type, data from events where position(${sessionId} in data::text) > 0 and not sample order by id`;
  const payments = await t.sql`
    select id, status, card_brand, card_last4, email, billing_name, failure_code, next_action from payments
    where checkout_session_id = ${sessionId} order by id`;
  const emails = await t.sql`
    select e.template, e.to_address from emails e join payments p on p.id = e.related_object
    where p.checkout_session_id = ${sessionId} order by e.id`;
  const session = await getSession(sessionId);
  return {
    events: events.map((e) => `${e.type} ${String((e.data.object as { object: string }).object)}`),
    payments: payments.map(({ id: _id, ...p }) => p),
    emails: [...emails],
    session: { status: session.status, payment_status: session.payment_status },
  };
}

/** The types of the webhook deliveries that reached the receiver about a session, sorted (they are sent in parallel). */
async function delivered(sessionId: string, count: number) {
  const got = await rx.waitFor(count, 15_000, (r) => r.body.includes(sessionId));
  return got.map((r) => (JSON.parse(r.body) as { type: string }).type).sort();
}

describe('paying a checkout session with the test helper', () => {
  it('when a session is paid with card 4242 4242 4242 4242, then the answer, events, webhooks and receipt are those of the hosted page', async () => {
    const byPage = await createSession(t, key, { customer_email: 'ada@example.com' });
    expect((await new Payer(t).pay(byPage.id, { email: 'ada@example.com', name: 'Ada Lovelace' })).status).toBe(303);
    const byHelper = await createSession(t, key, { customer_email: 'ada@example.com' });
    const res = await pay(byHelper.id, { card: CARDS.visa, email: 'ada@example.com', name: 'Ada Lovelace' });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'test_helpers.checkout_payment', livemode: false });
    expect(res.body.checkout_session).toEqual(await getSession(byHelper.id));
    expect(res.body.payment).toEqual(await getPayment(res.body.checkout_session.payment_id));
    expect(res.body.payment).toMatchObject({ status: 'SUCCEEDED', card: { brand: 'visa', last4: '4242' }, email: 'ada@example.com', billing_name: 'Ada Lovelace' });

    const page = await footprint(byPage.id);
    expect(page.events).toEqual(['checkout.session.completed checkout_session', 'payment.succeeded payment']);
    expect(page.emails).toEqual([{ template: 'receipt', to_address: 'ada@example.com' }]);
    expect(await footprint(byHelper.id)).toEqual(page);
    expect(await delivered(byHelper.id, 2)).toEqual(await delivered(byPage.id, 2));
    // The expiry job of the session is gone, as after a payment on the page.
    expect(await t.s.queues.get('session-expiry').getJob(byHelper.id)).toBeUndefined();
  });

  it('when a card is declined, then the answer is 200 with the FAILED payment, as the page shows a decline, and the session can still be paid', async () => {
    const byPage = await createSession(t, key);
    expect((await new Payer(t).pay(byPage.id, { card_number: CARDS.declined })).status).toBe(402);
    const byHelper = await createSession(t, key);
    const res = await pay(byHelper.id, { scenario: 'declined', email: 'payer@example.com', name: 'Ada Lovelace' });
    expect(res.status).toBe(200);
    expect(res.body.checkout_session).toMatchObject({ status: 'OPEN', payment_id: null });
    expect(res.body.payment).toMatchObject({ status: 'FAILED', failure_code: 'card_declined', failure_message: 'Your card was declined.' });
    expect(await footprint(byHelper.id)).toEqual(await footprint(byPage.id));

    const again = await pay(byHelper.id, { scenario: 'succeeded' });
    expect(again.body.payment.status).toBe('SUCCEEDED');
    expect(again.body.checkout_session.status).toBe('COMPLETE');
  });

  it.each([
    ['insufficient_funds', 'FAILED', 'insufficient_funds', '9995'],
    ['expired_card', 'FAILED', 'expired_card', '0069'],
    ['incorrect_cvc', 'FAILED', 'incorrect_cvc', '0127'],
    ['lost_card', 'FAILED', 'lost_card', '9987'],
    ['stolen_card', 'FAILED', 'stolen_card', '9979'],
    ['refund_fails', 'SUCCEEDED', null, '5126'],
    ['succeeded', 'SUCCEEDED', null, '4242'],
  ])('when the scenario is %s, then the payment is %s (%s) with the test card ending %s', async (scenario, status, code, last4) => {
    const cs = await createSession(t, key);
    const res = await pay(cs.id, { scenario });
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ status, failure_code: code, card: { last4 } });
  });

  it('when a session is paid with 3-D Secure then success, then events and receipt are those of the page\'s challenge passed', async () => {
    const byPage = await createSession(t, key);
    const payer = new Payer(t);
    const challenge = await payer.pay(byPage.id, { card_number: CARDS.threeDS });
    expect(challenge.status).toBe(303);
    await payer.get(pathOf(challenge.location!));
    const paymentId = /payment=(pay_[0-9a-z]+)/.exec(challenge.location!)![1]!;
    expect((await payer.post(`/checkout/${byPage.id}/authenticate`, { payment: paymentId, outcome: 'complete' })).status).toBe(303);

    const byHelper = await createSession(t, key);
    const res = await pay(byHelper.id, { scenario: 'requires_3ds_then_success', email: 'payer@example.com', name: 'Ada Lovelace' });
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ status: 'SUCCEEDED', next_action: null, card: { last4: '3220' } });
    expect(res.body.checkout_session.status).toBe('COMPLETE');
    expect(await footprint(byHelper.id)).toEqual(await footprint(byPage.id));
  });

  it('when a session is paid with 3-D Secure then failure, then the payment FAILED authentication_failed and the session stays OPEN, as on the page', async () => {
    const byPage = await createSession(t, key);
    const payer = new Payer(t);
    const challenge = await payer.pay(byPage.id, { card_number: CARDS.threeDS });
    await payer.get(pathOf(challenge.location!));
    const paymentId = /payment=(pay_[0-9a-z]+)/.exec(challenge.location!)![1]!;
    expect((await payer.post(`/checkout/${byPage.id}/authenticate`, { payment: paymentId, outcome: 'fail' })).status).toBe(402);

    const byHelper = await createSession(t, key);
    const res = await pay(byHelper.id, { scenario: 'requires_3ds_then_failure', email: 'payer@example.com', name: 'Ada Lovelace' });
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ status: 'FAILED', failure_code: 'authentication_failed' });
    expect(res.body.checkout_session.status).toBe('OPEN');
    expect(await footprint(byHelper.id)).toEqual(await footprint(byPage.id));
  });

  it('when the scenario is requires_3ds, then the payment waits at the challenge, which the payer can finish on the hosted page', async () => {
    const cs = await createSession(t, key);
    const res = await pay(cs.id, { scenario: 'requires_3ds' });
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ status: 'PENDING', next_action: 'three_d_secure' });
    const payer = new Payer(t);
    const page = await payer.get(`/checkout/${cs.id}/authenticate?payment=${res.body.payment.id}`);
    expect(page.status).toBe(200);
    const done = await payer.post(`/checkout/${cs.id}/authenticate`, { payment: res.body.payment.id, outcome: 'complete' });
    expect(done.status).toBe(303);
    expect((await getSession(cs.id)).status).toBe('COMPLETE');
  });

  it('when the scenario is disputed, then the payment succeeds and the disputes sync records its dispute, as card 0259 on the page', async () => {
    const cs = await createSession(t, key);
    const res = await pay(cs.id, { scenario: 'disputed' });
    expect(res.body.payment.status).toBe('SUCCEEDED');
    const dispute = await eventually(async () => (await t.request('GET', `/v1/disputes?payment_id=${res.body.payment.id}`, { key })).body.data?.[0]);
    expect(dispute).toMatchObject({ reason: 'fraudulent', status: 'NEEDS_RESPONSE' });
  });

  it('when no email or name is given, then the payment has the email the page would prefill (none: no receipt) and no billing name', async () => {
    const withEmail = await createSession(t, key, { customer_email: 'grace@example.com' });
    const a = await pay(withEmail.id, { scenario: 'succeeded' });
    expect(a.body.payment).toMatchObject({ email: 'grace@example.com', billing_name: null });
    const without = await createSession(t, key);
    const b = await pay(without.id, { scenario: 'succeeded' });
    expect(b.body.payment).toMatchObject({ email: null, billing_name: null, status: 'SUCCEEDED' });
    expect((await footprint(without.id)).emails).toEqual([]);
  });
});

describe('a payment link\'s quantity_limit through the helper', () => {
  it('when 12 sessions of a link with quantity_limit 4 are paid at once, then exactly 4 succeed and the others are refused uncharged (3 rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const link = await createLink(t, key, { quantity_limit: 4 });
      const sessions = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const p = new Payer(t);
          await p.get(pathOf(link.url));
          const started = await p.post(pathOf(link.url), {});
          return /\/(cs_[0-9a-z]+)/.exec(started.location!)![1]!;
        }),
      );
      const answers = await Promise.all(sessions.map((id) => pay(id, { scenario: 'succeeded' })));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
      const refused = answers.filter((a) => a.status !== 200);
      expect(refused).toHaveLength(8);
      for (const a of refused) {
        expect(a.status).toBe(400);
        expect(a.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_invalid_state' });
        expect(a.body.error.message).toContain('This payment link has ended');
      }
      const [counts] = await t.sql<{ ok: number; all: number }[]>`
        select count(*) filter (where status = 'SUCCEEDED')::int as ok, count(*)::int as all from payments where payment_link_id = ${link.id}`;
      expect(counts).toEqual({ ok: 4, all: 4 });
      expect((await t.request('GET', `/v1/payment-links/${link.id}`, { key })).body.status).toBe('COMPLETED');
    }
  });
});

describe('an invoice\'s session through the helper', () => {
  it('when the session of an invoice\'s Pay is paid by the helper, then the invoice is PAID with the same events and emails as paid on the page', async () => {
    const byPage = await sentInvoice(t, key);
    const page = await payInvoice(t, byPage.hosted_invoice_url);
    expect(page.paid.status).toBe(303);
    const byHelper = await sentInvoice(t, key);
    const started = await startPayment(t, byHelper.hosted_invoice_url);
    const res = await pay(started.sessionId!, { scenario: 'succeeded', email: 'payer@example.com', name: 'Ada Lovelace' });
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ status: 'SUCCEEDED', invoice_id: byHelper.id });
    expect((await t.request('GET', `/v1/invoices/${byHelper.id}`, { key })).body).toMatchObject({ status: 'PAID', amount_due_cents: 0 });
    const invoiceEvents = async (id: string) =>
      (await t.sql<{ type: string }[]>`select type from events where data->'object'->>'id' = ${id} order by id`).map((e) => e.type);
    expect(await invoiceEvents(byHelper.id)).toEqual(await invoiceEvents(byPage.id));
    expect(await invoiceEvents(byHelper.id)).toContain('invoice.paid');
    expect(await footprint(started.sessionId!)).toEqual(await footprint(page.sessionId!));
  });
});

describe('idempotency, refusals and validation', () => {
  it('when the same Idempotency-Key is sent twice, then the second answer is the first replayed and one payment exists', async () => {
    const cs = await createSession(t, key);
    const headers = { 'idempotency-key': `pay-${cs.id}` };
    const first = await pay(cs.id, { scenario: 'declined' }, headers);
    const second = await pay(cs.id, { scenario: 'declined' }, headers);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const rows = await t.sql`select id from payments where checkout_session_id = ${cs.id}`;
    expect(rows).toHaveLength(1);
    const other = await pay(cs.id, { scenario: 'succeeded' }, headers);
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it.each([
    ['/checkout/sessions/cs_0000000000000000000000000000/pay', { scenario: 'succeeded' }],
    ['/checkout/sessions/cs_0000000000000000000000000000/pay', { nonsense: true }],
    ['/checkout/sessions/cs_0000000000000000000000000000/expire', {}],
    ['/advance-time', { seconds: 60 }],
    ['/payments/pay_0000000000000000000000000000/dispute', {}],
    ['/no-such-helper', {}],
  ])('when a live key calls %s, then 403 permission_error saying test helpers are for test mode, before anything else', async (path, body) => {
    const res = await t.request('POST', `/v1/test-helpers${path}`, { key: live, body });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
    expect(res.body.error.message).toMatch(/test mode/);
  });

  it('when a live key names a live session, then it is refused and the session is untouched', async () => {
    const cs = await createSession(t, live);
    const res = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/expire`, { key: live });
    expect(res.status).toBe(403);
    expect((await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key: live })).body.status).toBe('OPEN');
  });

  it.each([
    ['neither card nor scenario', {}, 'parameter_missing', 'card'],
    ['both card and scenario', { card: DIGITS.visa, scenario: 'succeeded' }, 'parameter_invalid', 'scenario'],
    ['a card failing the Luhn check', { card: CARDS.invalidNumber }, 'parameter_invalid', 'card'],
    ['a card too short', { card: '4242' }, 'parameter_invalid', 'card'],
    ['a card as a number', { card: 4242424242424242 }, 'parameter_invalid', 'card'],
    ['an unknown scenario', { scenario: 'approved' }, 'parameter_invalid', 'scenario'],
    ['a bad email', { scenario: 'succeeded', email: 'not-an-email' }, 'parameter_invalid', 'email'],
    ['an empty name', { scenario: 'succeeded', name: '  ' }, 'parameter_invalid', 'name'],
    ['an unknown field', { scenario: 'succeeded', cvc: '123' }, 'parameter_unknown', 'cvc'],
  ])('when the body has %s, then 400 %s naming %s, and no payment', async (_label, body, code, param) => {
    const cs = await createSession(t, key);
    const res = await pay(cs.id, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(await t.sql`select id from payments where checkout_session_id = ${cs.id}`).toHaveLength(0);
  });

  it('when the session is COMPLETE or EXPIRED, then 400 resource_invalid_state; an unknown or another account\'s session, 404', async () => {
    const done = await createSession(t, key);
    await pay(done.id, { scenario: 'succeeded' });
    const completeAnswer = await pay(done.id, { scenario: 'succeeded' });
    expect(completeAnswer.status).toBe(400);
    expect(completeAnswer.body.error).toMatchObject({ code: 'resource_invalid_state' });
    expect(completeAnswer.body.error.message).toContain('COMPLETE');

    const old = await createSession(t, key);
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 second' where id = ${old.id}`;
    const expiredAnswer = await pay(old.id, { scenario: 'succeeded' });
    expect(expiredAnswer.status).toBe(400);
    expect(expiredAnswer.body.error.message).toContain('EXPIRED');
    expect((await getSession(old.id)).status).toBe('EXPIRED');

    expect((await pay('cs_0000000000000000000000000000', { scenario: 'succeeded' })).status).toBe(404);
    const stranger = await t.account();
    const theirs = await createSession(t, stranger.test);
    const res = await pay(theirs.id, { scenario: 'succeeded' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    expect((await t.request('GET', `/v1/checkout/sessions/${theirs.id}`, { key: stranger.test })).body.status).toBe('OPEN');
  });
});
