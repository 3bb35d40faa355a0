import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDueBatch, reconcileExpiries } from '../../src/checkout/expiry.ts';
import { newId } from '../../src/lib/ids.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { createSession } from './helpers.ts';
import { eventsFor } from '../helpers/events.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { eventually, sleep } from '../helpers/wait.ts';
import { createLink } from '../helpers/factories.ts';
import { DIGITS } from '../helpers/cards.ts';

const CARD_4242 = { number: DIGITS.visa, expMonth: 12, expYear: 2034, cvc: '123', name: 'Ada Lovelace' };

/** Rejects when `p` has not settled within `ms`: a hung call fails the test instead of hanging it. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

async function customer(t: TestServer, key: string, i: number): Promise<string> {
  const res = await t.request('POST', '/v1/customers', { key, body: { email: `payer${i}@example.com`, first_name: 'Ada', last_name: `L${i}` } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

/**
 * `n` payers on `n` sessions with customers, each on the card form, then all press Pay at once.
 * Every one must be answered (303 to success_url); then each session is COMPLETE with exactly one
 * SUCCEEDED payment and nothing left in flight.
 */
async function concurrentPayments(t: TestServer, n: number): Promise<void> {
  const { test: key } = await t.account();
  const sessions: Array<{ id: string }> = [];
  for (let i = 0; i < n; i++) sessions.push(await createSession(t, key, { customer_id: await customer(t, key, i) }));
  const payers = await Promise.all(
    sessions.map(async (cs) => {
      const p = new Payer(t);
      await p.get(`/checkout/${cs.id}`);
      return p;
    }),
  );
  const answers = await within(Promise.all(payers.map((p, i) => p.pay(sessions[i]!.id))), 15_000, `${n} concurrent payments`);
  expect(answers.map((a) => a.status)).toEqual(sessions.map(() => 303));
  answers.forEach((a, i) => expect(a.location).toBe(`https://merchant.example/thanks?session=${sessions[i]!.id}`));

  const ids = sessions.map((cs) => cs.id);
  const rows = await t.sql<{ id: string; status: string; customer_id: string | null; paid: number; other: number; in_flight: number }[]>`
    select s.id, s.status, s.customer_id,
      (select count(*)::int from payments p where p.checkout_session_id = s.id and p.status = 'SUCCEEDED') as paid,
      (select count(*)::int from payments p where p.checkout_session_id = s.id and p.status <> 'SUCCEEDED') as other,
      (select count(*)::int from payments p where p.checkout_session_id = s.id and p.processing_since is not null) as in_flight
    from checkout_sessions s where s.id = any(${ids}::text[])`;
  expect(rows).toHaveLength(n);
  for (const r of rows) expect(r).toMatchObject({ status: 'COMPLETE', paid: 1, other: 0, in_flight: 0 });
  expect(rows.every((r) => r.customer_id?.startsWith('cus_'))).toBe(true);
}

describe('no hung process: payments at a small pool', () => {
  for (const [pool, n] of [['2', 20], ['1', 8]] as const) {
    describe(`DB_POOL_MAX=${pool}`, () => {
      const t = useTestServer({ env: { DB_POOL_MAX: pool } });

      it(`when ${n} payers with customers pay at once, then every one is answered, each session is COMPLETE with exactly one SUCCEEDED payment`, async () => {
        await concurrentPayments(t, n);
      });

      it('when one payer presses Pay five times at once on one session, then the card is charged once and the other presses are refused or sent to the paid session', async () => {
        const { test: key } = await t.account();
        const cs = await createSession(t, key, { customer_id: await customer(t, key, 99) });
        const payer = new Payer(t);
        await payer.get(`/checkout/${cs.id}`);
        const answers = await within(Promise.all(Array.from({ length: 5 }, () => payer.pay(cs.id))), 15_000, 'five presses');
        const success = `https://merchant.example/thanks?session=${cs.id}`;
        expect(answers.filter((a) => a.status === 303 && a.location === success)).toHaveLength(1);
        for (const a of answers.filter((x) => x.location !== success)) {
          // Refused while the first was in flight, or redirected to the session once it was paid.
          expect(a.status === 409 ? a.html.includes('being processed') : a.location === `/checkout/${cs.id}`).toBe(true);
        }
        const rows = await t.sql`select status from payments where checkout_session_id = ${cs.id}`;
        expect(rows.map((r) => r.status)).toEqual(['SUCCEEDED']);
        expect((await t.sql`select count(*)::int as n from simulator_attempts a join payments p on p.id = a.attempt_id where p.checkout_session_id = ${cs.id}`)[0]!.n).toBe(1);
      });
    });
  }
});

describe('database bounds on every pooled connection', () => {
  const t = useTestServer({ env: { DB_STATEMENT_TIMEOUT_MS: '1500', DB_LOCK_TIMEOUT_MS: '500', DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '700' } });
  let other: postgres.Sql;
  beforeAll(async () => {
    // A client outside the service's pool, to hold a lock the service then meets.
    const url = new URL(t.s.config.databaseUrl);
    other = postgres(url.toString(), { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await other.end({ timeout: 1 });
  });

  it('when a pooled connection is asked, then it shows the configured statement, lock and idle-in-transaction timeouts', async () => {
    const [row] = await t.s.sql`
      select current_setting('statement_timeout') as st, current_setting('lock_timeout') as lt,
             current_setting('idle_in_transaction_session_timeout') as it`;
    expect(row).toEqual({ st: '1500ms', lt: '500ms', it: '700ms' });
  });

  it('when another client holds the session row lock, then the payment fails within the lock bound instead of hanging, charges nothing, and works once the lock is gone', async () => {
    const { test: key } = await t.account();
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.get(`/checkout/${cs.id}`);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = other.begin(async (tx) => {
      await tx`select id from checkout_sessions where id = ${cs.id} for update`;
      locked();
      await released;
    });
    await isLocked;
    const started = Date.now();
    const blocked = await within(payer.pay(cs.id), 5000, 'payment on a locked session');
    const waited = Date.now() - started;
    release();
    await holder;
    expect(blocked.status).toBe(500); // the page's error page: the lock bound (55P03) ended the attempt
    expect(waited).toBeLessThan(5000);
    expect(await t.sql`select id from payments where checkout_session_id = ${cs.id}`).toEqual([]);
    expect(await t.sql`select attempt_id from simulator_attempts a join payments p on p.id = a.attempt_id where p.checkout_session_id = ${cs.id}`).toEqual([]);

    const page = await payer.get(`/checkout/${cs.id}`);
    expect(page.status).toBe(200);
    expect((await payer.pay(cs.id)).status).toBe(303);
    expect((await t.sql`select status from checkout_sessions where id = ${cs.id}`)[0]!.status).toBe('COMPLETE');
  });

  it('when a statement runs past the statement bound, then Postgres cancels it (57014)', async () => {
    await expect(t.s.sql`select pg_sleep(5)`).rejects.toMatchObject({ code: '57014' });
  });

  it('when a transaction sits idle past the idle-in-transaction bound, then Postgres ends it and its locks are released', async () => {
    const { test: key } = await t.account();
    const cs = await createSession(t, key);
    const abandoned = t.s.sql.begin(async (tx) => {
      await tx`select id from checkout_sessions where id = ${cs.id} for update`;
      await sleep(1500); // fault drill: idle in the transaction past its bound is the subject
      await tx`select 1`;
    });
    // Postgres ends the session (FATAL 25P03), which postgres.js reports on the waiting query as the connection closed.
    await expect(abandoned).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    // The row is free again: another client locks it at once.
    await other.begin(async (tx) => {
      await tx`set local lock_timeout = 200`;
      await tx`select id from checkout_sessions where id = ${cs.id} for update`;
    });
  });
});

describe('a crash between the recorded attempt and the recorded outcome', () => {
  const t = useTestServer({ workers: [reconcileWorker as never], env: { RECONCILE_INTERVAL_MS: '1000' } });
  let key: string;
  beforeAll(async () => {
    key = (await t.account()).test;
  });

  /**
   * What a crash leaves behind: the attempt committed PENDING and in flight `ageSeconds` ago (tx 1),
   * the processor possibly called, tx 2 never run.
   */
  async function leftInFlight(sessionId: string, ageSeconds: number) {
    const [cs] = await t.sql`select * from checkout_sessions where id = ${sessionId}`;
    const intent = await t.s.processors.test.createPaymentIntent({ reference: cs!.id, amount: cs!.amount_cents, currency: cs!.currency, customer: null, livemode: cs!.livemode });
    await t.sql`update checkout_sessions set payment_intent_id = ${intent.id} where id = ${sessionId}`;
    const id = newId('pay');
    await t.sql`
      insert into payments (id, account_id, livemode, amount_cents, currency, checkout_session_id, payment_intent_id,
        payment_link_id, card_brand, card_last4, email, billing_name, processing_since)
      values (${id}, ${cs!.account_id}, ${cs!.livemode}, ${cs!.amount_cents}, ${cs!.currency}, ${sessionId}, ${intent.id},
        ${cs!.payment_link_id}, 'visa', '4242', 'payer@example.com', 'Ada Lovelace', now() - make_interval(secs => ${ageSeconds}))`;
    return { id, intent: intent.id };
  }
  const sessionRow = async (id: string) => (await t.sql`select status, payment_id from checkout_sessions where id = ${id}`)[0]!;
  const paymentRow = async (id: string) => (await t.sql`select status, failure_code, processing_since from payments where id = ${id}`)[0]!;

  it('when the processor charged the attempt, then the running sweeper completes the session with both events', async () => {
    const cs = await createSession(t, key);
    // Left young, so the running sweeper cannot ask about it before the charge is made; then aged.
    const { id, intent } = await leftInFlight(cs.id, 0);
    expect((await t.s.processors.test.confirmPaymentIntent(intent, id, CARD_4242)).status).toBe('succeeded');
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${id}`;

    await eventually(async () => (await sessionRow(cs.id)).status === 'COMPLETE', 15_000);
    expect(await sessionRow(cs.id)).toEqual({ status: 'COMPLETE', payment_id: id });
    expect(await paymentRow(id)).toEqual({ status: 'SUCCEEDED', failure_code: null, processing_since: null });
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.completed']);
    expect(await eventsFor(t, id)).toEqual(['payment.succeeded']);
    expect((await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body).toMatchObject({ status: 'COMPLETE', payment_status: 'paid' });
  });

  it('when the processor never saw the attempt, then the sweeper fails it with payment.failed, a late confirmation is refused, and the payer can pay again', async () => {
    const cs = await createSession(t, key);
    const { id, intent } = await leftInFlight(cs.id, 120);

    await eventually(async () => (await paymentRow(id)).status === 'FAILED', 15_000);
    expect(await paymentRow(id)).toEqual({ status: 'FAILED', failure_code: 'processing_error', processing_since: null });
    expect(await eventsFor(t, id)).toEqual(['payment.failed']);
    expect((await sessionRow(cs.id)).status).toBe('OPEN');
    // The processor closed the attempt when it answered not_found: it can no longer charge it.
    expect((await t.s.processors.test.confirmPaymentIntent(intent, id, CARD_4242)).status).toBe('declined');

    expect((await new Payer(t).pay(cs.id)).status).toBe(303);
    expect((await sessionRow(cs.id)).status).toBe('COMPLETE');
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.completed']);
  });

  it('when an attempt is in flight past expires_at, then no expiry path expires the session, a second attempt is refused, and the charge completes it', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    await payer.get(`/checkout/${cs.id}`);
    const { id, intent } = await leftInFlight(cs.id, 0);
    await t.sql`update checkout_sessions set expires_at = now() - interval '1 minute' where id = ${cs.id}`;

    const expire = await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
    expect(expire.status).toBe(400);
    expect(expire.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_invalid_state' });
    expect(expire.body.error.message).toContain('payment on this checkout session is in progress');
    expect((await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body.status).toBe('OPEN'); // expire-on-read
    expect((await t.request('GET', '/v1/checkout/sessions?limit=100', { key })).status).toBe(200); // the list's expire pass
    await reconcileExpiries(t.s);
    expect(await expireDueBatch(t.s, t.s.log, new Date(), 500)).toEqual([]);
    expect((await sessionRow(cs.id)).status).toBe('OPEN');

    const second = await payer.pay(cs.id);
    expect(second.status).toBe(409);
    expect(second.html).toContain('being processed');
    expect(await t.sql`select id from payments where checkout_session_id = ${cs.id}`).toEqual([{ id }]);

    // The processor's answer decides: charged, so the session completes even past expires_at.
    await t.s.processors.test.confirmPaymentIntent(intent, id, CARD_4242);
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${id}`;
    await eventually(async () => (await sessionRow(cs.id)).status === 'COMPLETE', 15_000);
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.completed']);
    expect(await eventsFor(t, id)).toEqual(['payment.succeeded']);
  });

  it('when an attempt on a link with quantity_limit 1 is in flight, then another payer is refused uncharged, and the swept success completes the link', async () => {
    const link = await createLink(t, key, { quantity_limit: 1 });
    const open = async () => {
      const p = new Payer(t);
      await p.get(pathOf(link.url));
      const started = await p.post(pathOf(link.url), {});
      await p.get(pathOf(started.location!));
      return { p, session: /\/(cs_[0-9a-z]+)/.exec(started.location!)![1]! };
    };
    const first = await open();
    const second = await open();
    const { id, intent } = await leftInFlight(first.session, 0);

    const refused = await second.p.pay(second.session);
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('This payment link has ended');
    expect(await t.sql`select id from payments where checkout_session_id = ${second.session}`).toEqual([]);

    await t.s.processors.test.confirmPaymentIntent(intent, id, CARD_4242);
    await t.sql`update payments set processing_since = now() - interval '2 minutes' where id = ${id}`;
    await eventually(async () => (await t.sql`select status from payment_links where id = ${link.id}`)[0]!.status === 'COMPLETED', 15_000);
    expect((await sessionRow(first.session)).status).toBe('COMPLETE');
    expect((await t.sql`select count(*)::int as n from payments where payment_link_id = ${link.id} and status = 'SUCCEEDED'`)[0]!.n).toBe(1);
  });
  it('when attempts on a link are in flight, then quantity_limit cannot go below the payments made plus those in flight', async () => {
    const link = await createLink(t, key, { quantity_limit: 5 });
    const sessions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const p = new Payer(t);
      await p.get(pathOf(link.url));
      const started = await p.post(pathOf(link.url), {});
      sessions.push(/\/(cs_[0-9a-z]+)/.exec(started.location!)![1]!);
    }
    await leftInFlight(sessions[0]!, 0);
    await leftInFlight(sessions[1]!, 0);

    const lower = await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { quantity_limit: 1 } });
    expect(lower.status).toBe(400);
    expect(lower.body.error).toMatchObject({ code: 'parameter_invalid', param: 'quantity_limit' });
    expect(lower.body.error.message).toContain('0 successful payments and 2 in progress');
    expect((await t.sql`select quantity_limit, status from payment_links where id = ${link.id}`)[0]).toEqual({ quantity_limit: 5, status: 'ACTIVE' });

    // Down to exactly the places taken is allowed; the link stays open for the attempts to finish.
    const exact = await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { quantity_limit: 2 } });
    expect(exact.status).toBe(200);
    expect(exact.body).toMatchObject({ quantity_limit: 2, status: 'ACTIVE' });
  });
});
