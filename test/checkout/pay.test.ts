import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentParticipant } from '../../src/checkout/participants.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession } from './helpers.ts';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { Payer } from '../helpers/payer.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const session = async (id: string) => (await t.request('GET', `/v1/checkout/sessions/${id}`, { key })).body;
const paymentsOf = (id: string) =>
  t.sql`select id, status, failure_code, payment_intent_id, card_brand, card_last4 from payments where checkout_session_id = ${id} order by id`;

describe('paying on the hosted page', () => {
  it('when the card succeeds, then 303 to success_url with the id, the session is COMPLETE and paid, the payment SUCCEEDED, both events recorded', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    const res = await payer.pay(cs.id);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`https://merchant.example/thanks?session=${cs.id}`);

    const done = await session(cs.id);
    expect(done).toMatchObject({ status: 'COMPLETE', payment_status: 'paid' });
    expect(done.completed_at).toBeGreaterThan(0);
    expect(done.payment_intent_id).toMatch(/^pi_/);
    expect(done.payment_id).toMatch(/^pay_/);
    const pay = (await t.request('GET', `/v1/payments/${done.payment_id}`, { key })).body;
    expect(pay).toMatchObject({
      object: 'payment',
      status: 'SUCCEEDED',
      amount_cents: 1999,
      currency: 'usd',
      checkout_session_id: cs.id,
      payment_intent_id: done.payment_intent_id,
      card: { brand: 'visa', last4: '4242' },
      email: 'payer@example.com',
      billing_name: 'Ada Lovelace',
      receipt_url: `${t.s.config.checkoutUrl}/${cs.id}/receipt`,
    });
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.completed']);
    expect(await eventsFor(t, pay.id)).toEqual(['payment.succeeded']);
    const [completed] = await eventObjects(t, cs.id);
    expect(completed!.object).toEqual(done);
    expect(await t.s.queues.get('session-expiry').getJob(cs.id)).toBeUndefined();
  });

  it('when a session is paid, then no table holds the card number or the CVC, only brand and last four', async () => {
    const cs = await createSession(t, key);
    await new Payer(t).pay(cs.id, { card_number: '5555 5555 5555 4444', cvc: '987' });
    const dump = await t.sql<{ j: string }[]>`
      select row_to_json(p)::text as j from payments p where checkout_session_id = ${cs.id}
      union all select row_to_json(c)::text from checkout_sessions c where id = ${cs.id}
      union all select data::text from events where position(${cs.id} in data::text) > 0`;
    const all = dump.map((r) => r.j).join('\n');
    expect(all).not.toContain('5555555555554444');
    expect(all).not.toContain('555555555555');
    // Three digits can turn up inside ids and timestamps: look for the CVC as a stored value.
    const values: unknown[] = [];
    const walk = (v: unknown): void => {
      if (v && typeof v === 'object') Object.values(v).forEach(walk);
      else values.push(v);
    };
    dump.forEach((r) => walk(JSON.parse(r.j)));
    expect(values.filter((v) => String(v) === '987')).toEqual([]);
    expect(all).not.toMatch(/cvc/i);
    expect(await paymentsOf(cs.id)).toMatchObject([{ card_brand: 'mastercard', card_last4: '4444' }]);
  });

  it.each([
    [CARDS.declined, 'card_declined', 'Your card was declined.'],
    [CARDS.insufficientFunds, 'insufficient_funds', 'insufficient funds'],
    [CARDS.expired, 'expired_card', 'expired'],
    [CARDS.incorrectCvc, 'incorrect_cvc', 'security code'],
  ])('when card %s is declined (%s), then the page says "Your card was declined" with the reason, payment.failed is recorded and the session stays OPEN', async (number, code, reason) => {
    const cs = await createSession(t, key);
    const res = await new Payer(t).pay(cs.id, { card_number: number });
    expect(res.status).toBe(402);
    expect(res.html).toContain('Your card was declined');
    expect(res.html).toContain(reason);
    expect(res.html).toContain('name="card_number"'); // the form is there to try again
    expect(res.html).toContain('value="payer@example.com"'); // what the payer typed is kept (not the card)
    const [p] = await paymentsOf(cs.id);
    expect(p).toMatchObject({ status: 'FAILED', failure_code: code });
    expect(await eventsFor(t, p!.id)).toEqual(['payment.failed']);
    expect((await session(cs.id)).status).toBe('OPEN');
  });

  it('when a declined payer tries again with a good card, then the session completes on one payment intent with two payment records', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    expect((await payer.pay(cs.id, { card_number: DIGITS.declined })).status).toBe(402);
    expect((await payer.pay(cs.id)).status).toBe(303);
    const rows = await paymentsOf(cs.id);
    expect(rows.map((r) => r.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(new Set(rows.map((r) => r.payment_intent_id)).size).toBe(1);
    expect((await session(cs.id)).payment_id).toBe(rows[1]!.id);
    const list = await t.request('GET', '/v1/payments?status=FAILED&limit=100', { key });
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(rows[0]!.id);
  });

  it.each([
    [{ card_number: CARDS.invalidNumber }, 'card number is invalid'],
    [{ card_number: '1234' }, 'card number is invalid'],
    [{ card_number: '' }, 'card number is invalid'],
    [{ expiry: '01/20' }, 'in the past'],
    [{ expiry: '13/30' }, 'month'],
    [{ expiry: '1230' }, 'MM/YY'],
    [{ cvc: '12' }, 'security code'],
    [{ cvc: 'abc' }, 'security code'],
    [{ email: 'not-an-email' }, 'valid email'],
    [{ name: '   ' }, 'name on the card'],
  ])('when the form has %j, then the page answers 400 in-page with a clear message and nothing is charged', async (change, message) => {
    const cs = await createSession(t, key);
    const res = await new Payer(t).pay(cs.id, change);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.html).toContain(message);
    expect(res.html).toContain('aria-invalid="true"');
    expect(await paymentsOf(cs.id)).toEqual([]);
  });

  it('when the form post is oversized or not a form, then the page answers 4xx, never 5xx', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.get(`/checkout/${cs.id}`);
    const big = await payer.post(`/checkout/${cs.id}/pay`, { name: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    const json = await fetch(`${t.url}/checkout/${cs.id}/pay`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: payer.cookie }, body: '{"card_number": 1' });
    expect(json.status).toBeLessThan(500);
    expect(json.status).toBeGreaterThanOrEqual(400);
  });

  it('when the session is already COMPLETE, then another post is sent to the receipt and charges nothing', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.pay(cs.id);
    const again = await payer.pay(cs.id);
    expect(again.status).toBe(303);
    expect(again.location).toBe(`/checkout/${cs.id}`);
    expect((await paymentsOf(cs.id)).length).toBe(1);
    const page = await payer.get(`/checkout/${cs.id}`);
    expect(page.html).toContain('<dt>Receipt</dt>');
    expect(page.html).toContain(`href="/checkout/${cs.id}/receipt"`);
    expect(page.html).not.toContain('name="card_number"');
    const receipt = await payer.get(`/checkout/${cs.id}/receipt`);
    expect(receipt.status).toBe(200);
    expect(receipt.html).toContain('Receipt');
    expect(receipt.html).toContain((await paymentsOf(cs.id))[0]!.id);
    expect(receipt.html).toContain('•••• 4242');
  });

  it('when a payment is attempted after expires_at (job not run yet), then it sees EXPIRED: no charge, one expired event', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.get(`/checkout/${cs.id}`);
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 second' where id = ${cs.id}`;
    const res = await payer.pay(cs.id);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/checkout/${cs.id}`);
    expect(await paymentsOf(cs.id)).toEqual([]);
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    const page = await payer.get(`/checkout/${cs.id}`);
    expect(page.html).toContain('expired');
    expect(page.html).not.toContain('<form');
  });
});

describe('3-D Secure', () => {
  it.each([CARDS.threeDS, CARDS.threeDSAlt])('when card %s is used and the challenge is completed, then the session completes', async (number) => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    const res = await payer.pay(cs.id, { card_number: number });
    expect(res.status).toBe(303);
    expect(res.location).toMatch(new RegExp(`^/checkout/${cs.id}/authenticate\\?payment=pay_`));
    const [pending] = await paymentsOf(cs.id);
    expect(pending!.status).toBe('PENDING');
    expect((await t.request('GET', `/v1/payments/${pending!.id}`, { key })).body.next_action).toBe('three_d_secure');

    const challenge = await payer.get(res.location!);
    expect(challenge.status).toBe(200);
    expect(challenge.html).toContain('Complete authentication');
    expect(challenge.html).toContain('Fail authentication');
    const done = await payer.post(`/checkout/${cs.id}/authenticate`, { payment: pending!.id, outcome: 'complete' });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`https://merchant.example/thanks?session=${cs.id}`);
    expect(await session(cs.id)).toMatchObject({ status: 'COMPLETE', payment_status: 'paid', payment_id: pending!.id });
    expect(await eventsFor(t, pending!.id)).toEqual(['payment.succeeded']);
  });

  it('when the challenge is failed, then the session stays OPEN with a message, payment.failed is recorded, and the payer can pay again', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    const res = await payer.pay(cs.id, { card_number: DIGITS.threeDS });
    const paymentId = new URL(res.location!, t.url).searchParams.get('payment')!;
    await payer.get(res.location!);
    const failed = await payer.post(`/checkout/${cs.id}/authenticate`, { payment: paymentId, outcome: 'fail' });
    expect(failed.status).toBe(402);
    expect(failed.html).toContain('authentication failed');
    expect(failed.html).toContain('name="card_number"');
    expect((await session(cs.id)).status).toBe('OPEN');
    expect(await paymentsOf(cs.id)).toMatchObject([{ status: 'FAILED', failure_code: 'authentication_failed' }]);
    expect(await eventsFor(t, paymentId)).toEqual(['payment.failed']);

    expect((await payer.pay(cs.id)).status).toBe(303);
    expect((await session(cs.id)).status).toBe('COMPLETE');
  });

  it('when a challenge is left unfinished and the payer starts over, then the old attempt fails and cannot complete any more', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    const first = await payer.pay(cs.id, { card_number: DIGITS.threeDS });
    const firstId = new URL(first.location!, t.url).searchParams.get('payment')!;
    await payer.pay(cs.id, { card_number: DIGITS.declined });
    expect(await paymentsOf(cs.id)).toMatchObject([
      { id: firstId, status: 'FAILED', failure_code: 'authentication_abandoned' },
      { status: 'FAILED', failure_code: 'card_declined' },
    ]);
    const late = await payer.post(`/checkout/${cs.id}/authenticate`, { payment: firstId, outcome: 'complete' });
    expect(late.status).toBe(303);
    expect(late.location).toBe(`/checkout/${cs.id}`);
    expect((await session(cs.id)).status).toBe('OPEN');
  });
});

describe('hosted page security', () => {
  it('when the pay form is posted without the CSRF token or with another browser cookie, then it answers 403 and charges nothing', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.get(`/checkout/${cs.id}`);
    const noToken = await payer.post(`/checkout/${cs.id}/pay`, { _csrf: '', card_number: DIGITS.visa, expiry: '12/34', cvc: '123', email: 'a@b.co', name: 'A' });
    expect(noToken.status).toBe(403);
    const stranger = new Payer(t);
    await stranger.get(`/checkout/${cs.id}`);
    stranger.token = payer.token; // a token minted for another browser
    const wrongCookie = await stranger.pay(cs.id);
    expect(wrongCookie.status).toBe(403);
    const other = await createSession(t, key);
    const otherScope = await payer.post(`/checkout/${other.id}/pay`, { card_number: DIGITS.visa, expiry: '12/34', cvc: '123', email: 'a@b.co', name: 'A' });
    expect(otherScope.status).toBe(403); // the token is bound to its session
    expect(await paymentsOf(cs.id)).toEqual([]);
    expect(await paymentsOf(other.id)).toEqual([]);
  });

  it('when a cross-site form posts to the pay URL, then it is refused', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.get(`/checkout/${cs.id}`);
    const res = await fetch(`${t.url}/checkout/${cs.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: payer.cookie, 'sec-fetch-site': 'cross-site' },
      body: new URLSearchParams({ _csrf: payer.token, email: 'a@b.co', name: 'A', card_number: DIGITS.visa, expiry: '12/34', cvc: '123' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(await paymentsOf(cs.id)).toEqual([]);
  });

  it('when hosted pages answer, then they carry a CSP and helmet headers; the JSON API does not carry the page CSP', async () => {
    const cs = await createSession(t, key);
    const page = await new Payer(t).get(`/checkout/${cs.id}`);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' https://merchant.example");
    expect(csp).not.toContain('script-src');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const api = await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key });
    expect(api.headers.get('content-security-policy')).toBeNull();
  });

  it('when payment attempts on one session pass the limit, then further attempts answer 429 and reach no processor', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    for (let i = 0; i < 10; i++) expect((await payer.pay(cs.id, { card_number: DIGITS.declined })).status).toBe(402);
    const throttled = await payer.pay(cs.id);
    expect(throttled.status).toBe(429);
    expect(throttled.html).toContain('Too many payment attempts');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await paymentsOf(cs.id)).length).toBe(10);
    expect((await session(cs.id)).status).toBe('OPEN');
    const key2 = await t.s.redis.ttl(`${t.s.config.redisPrefix}:ratelimit:pay-session:${cs.id}`);
    expect(key2).toBeGreaterThan(0);
  });
});

describe('payment participants', () => {
  // This file's own Services (never a global list): the participants built by createServices, plus
  // one for the test, put back after each test.
  let built: readonly PaymentParticipant[];
  beforeAll(() => void (built = t.s.paymentParticipants));
  afterEach(() => void (t.s.paymentParticipants = built));
  const participate = (p: Omit<PaymentParticipant, 'name'>) => void (t.s.paymentParticipants = [...built, { name: 'test', ...p }]);

  it('when a participant refuses, then the payer is not charged and the page shows its message', async () => {
    const cs = await createSession(t, key);
    participate({ beforeCharge: async (_tx, s) => (s.id === cs.id ? 'This link has ended' : null), afterSuccess: async () => {} });
    const res = await new Payer(t).pay(cs.id);
    expect(res.status).toBe(409);
    expect(res.html).toContain('This link has ended');
    expect(await paymentsOf(cs.id)).toEqual([]);
    expect((await session(cs.id)).status).toBe('OPEN');
  });

  it('when a payment succeeds, then afterSuccess runs in its transaction, and a failing participant undoes that transaction: the charged attempt stays in flight for the sweeper', async () => {
    const seen: string[] = [];
    participate({
      beforeCharge: async () => null,
      afterSuccess: async (tx, s, p) => {
        const [row] = await tx.sql`select status from checkout_sessions where id = ${s.id}`;
        seen.push(`${row!.status}:${p.status}`);
        if (s.metadata.boom) throw new Error('participant failed');
      },
    });
    const ok = await createSession(t, key);
    expect((await new Payer(t).pay(ok.id)).status).toBe(303);
    expect(seen).toEqual(['COMPLETE:SUCCEEDED']);

    const boom = await createSession(t, key, { metadata: { boom: 'yes' } });
    const res = await new Payer(t).pay(boom.id);
    expect(res.status).toBe(500);
    expect(res.html).not.toContain('Error');
    expect((await session(boom.id)).status).toBe('OPEN');
    // The attempt was committed before the card was charged: it stays PENDING and in flight (the
    // sweeper asks the processor again later), with no event recorded.
    const [stuck] = await t.sql`select id, status, processing_since from payments where checkout_session_id = ${boom.id}`;
    expect(stuck).toMatchObject({ status: 'PENDING' });
    expect(stuck!.processing_since).toBeInstanceOf(Date);
    expect(await eventsFor(t, boom.id)).toEqual([]);
    expect(await eventsFor(t, stuck!.id)).toEqual([]);
  });
});
