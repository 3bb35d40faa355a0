import { beforeAll, describe, expect, it } from 'vitest';
import { BLOCKED_MESSAGE } from '../../src/checkout/pay.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';
import { eventsFor } from '../helpers/events.ts';
import { createSession } from '../helpers/factories.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';

// X-Forwarded-For from the loopback proxy gives each test payer its own client address.
const t = useTestServer({ env: { TRUST_PROXY: 'loopback' } });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const from = (ip: string) => new Payer(t, { 'x-forwarded-for': ip });
const api = async (method: string, path: string, body?: unknown) => {
  const res = await t.request(method, path, { key, body });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const rule = (body: Record<string, unknown>) => api('POST', '/v1/fraud/rules', body);
const listItem = (kind: string, value: string) => api('POST', '/v1/fraud/lists', { kind, value });
const paymentsOf = (sessionId: string) => t.sql<{ id: string; status: string; failure_code: string | null; fraud_action: string | null }[]>`
  select id, status, failure_code, fraud_action from payments where checkout_session_id = ${sessionId} order by id`;
const processorSaw = async (paymentId: string) => (await t.sql`select 1 from simulator_attempts where attempt_id = ${paymentId}`).length > 0;

/** Pays a fresh session with `card` from `payer`; answers the page and the session's last payment as the API shows it. */
async function attempt(payer: Payer, card: string, email = 'payer@example.com') {
  const cs = await createSession(t, key);
  const page = await payer.pay(cs.id, { card_number: card, email });
  const [last] = (await paymentsOf(cs.id)).slice(-1);
  return { page, session: cs.id, payment: last ? await api('GET', `/v1/payments/${last.id}`) : null };
}

describe('fraud rules on the hosted page', () => {
  it('when a card-testing run tries many cards from one address, then a velocity rule blocks it before the processor and the payer sees a plain decline', async () => {
    const r = await rule({ name: 'Card testing', action: 'block', conditions: [{ attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 3 }] });
    const tester = from('203.0.113.66');
    const cards = [CARDS.declined, CARDS.insufficientFunds, CARDS.incorrectCvc, CARDS.expired, CARDS.visa, '5555 5555 5555 4444'];
    // One session, many cards: what a card tester does with one checkout link.
    const cs = await createSession(t, key);
    const pages = [];
    for (const card of cards) pages.push(await tester.pay(cs.id, { card_number: card }));
    expect(pages.map((p) => p.status)).toEqual([402, 402, 402, 402, 402, 402]);
    for (const p of pages.slice(3)) {
      expect(p.html).toContain(BLOCKED_MESSAGE);
      expect(p.html).not.toContain('Card testing');
    }
    const rows = await paymentsOf(cs.id);
    expect(rows.map((p) => p.failure_code)).toEqual(['card_declined', 'insufficient_funds', 'incorrect_cvc', 'blocked', 'blocked', 'blocked']);
    // The blocked attempts never reached the processor; the good card of the run was never charged.
    expect(await Promise.all(rows.map((p) => processorSaw(p.id)))).toEqual([true, true, true, false, false, false]);
    const blocked = await api('GET', `/v1/payments/${rows[3]!.id}`);
    expect(blocked).toMatchObject({
      status: 'FAILED',
      failure_code: 'blocked',
      failure_message: BLOCKED_MESSAGE,
      fraud: { action: 'block', rule_id: r.id, reason: 'Rule "Card testing": client_ip_attempts in 600s >= 3' },
    });
    expect(await eventsFor(t, rows[3]!.id)).toEqual(['payment.failed']);
    expect((await api('GET', `/v1/checkout/sessions/${cs.id}`)).status).toBe('OPEN');

    // Another address is not held back by the run.
    const other = await attempt(from('198.51.100.20'), CARDS.visa);
    expect(other.page.status).toBe(303);
    expect(other.payment).toMatchObject({ status: 'SUCCEEDED', fraud: null });
    await api('DELETE', `/v1/fraud/rules/${r.id}`);
  });

  it('when the same card pays twice, then both payments carry one stable fingerprint (never the number) and its country; another card has another', async () => {
    const a = await attempt(from('192.0.2.1'), CARDS.visa);
    const b = await attempt(from('192.0.2.2'), CARDS.visa);
    const c = await attempt(from('192.0.2.3'), CARDS.france);
    expect(a.payment.card.fingerprint).toMatch(/^fp_[0-9a-f]{24}$/);
    expect(b.payment.card.fingerprint).toBe(a.payment.card.fingerprint);
    expect(c.payment.card.fingerprint).not.toBe(a.payment.card.fingerprint);
    expect(a.payment.card.fingerprint).not.toContain('4242');
    expect([a.payment.card.country, c.payment.card.country]).toEqual(['US', 'FR']);
  });

  it('when an email is on the block list, then a payment with it (in any case) is blocked and another email is not', async () => {
    const item = await listItem('email', 'Mallory@Example.com');
    expect(item).toMatchObject({ object: 'fraud_list_item', kind: 'email', value: 'mallory@example.com' });
    const blocked = await attempt(from('192.0.2.10'), CARDS.visa, 'MALLORY@example.com');
    expect(blocked.page.status).toBe(402);
    expect(blocked.payment).toMatchObject({ failure_code: 'blocked', fraud: { action: 'block', rule_id: item.id, reason: 'Block list: the email is listed' } });
    expect((await attempt(from('192.0.2.10'), CARDS.visa, 'alice@example.com')).page.status).toBe(303);
  });

  it('when a card fingerprint is on the block list, then that card is blocked and another card pays', async () => {
    const first = await attempt(from('192.0.2.20'), CARDS.germany);
    expect(first.page.status).toBe(303);
    await listItem('card_fingerprint', first.payment.card.fingerprint);
    const again = await attempt(from('192.0.2.21'), CARDS.germany);
    expect(again.payment).toMatchObject({ status: 'FAILED', failure_code: 'blocked', card: { fingerprint: first.payment.card.fingerprint } });
    expect((await attempt(from('192.0.2.21'), CARDS.canada)).page.status).toBe(303);
  });

  it('when a card country is on the block list, then cards of that country are blocked', async () => {
    await listItem('card_country', 'ng');
    const ng = await attempt(from('192.0.2.30'), CARDS.nigeria);
    expect(ng.payment).toMatchObject({ failure_code: 'blocked', card: { country: 'NG' } });
    expect((await attempt(from('192.0.2.30'), CARDS.brazil)).page.status).toBe(303);
  });

  it('when a client network is on the block list, then every address in it is blocked and one outside is not', async () => {
    await listItem('client_ip', '198.51.100.128/25');
    const inside = await attempt(from('198.51.100.200'), CARDS.visa);
    expect(inside.payment).toMatchObject({ failure_code: 'blocked', fraud: { reason: "Block list: the client's address is listed" } });
    expect((await attempt(from('198.51.100.100'), CARDS.visa)).page.status).toBe(303);
  });

  it('when an allow rule matches a listed payment, then allow wins and the payment succeeds marked allow', async () => {
    const r = await rule({ name: 'Trusted buyers', action: 'allow', conditions: [{ attribute: 'email_domain', operator: 'in', values: ['trusted.example'] }] });
    const ok = await attempt(from('198.51.100.201'), CARDS.nigeria, 'buyer@trusted.example');
    expect(ok.page.status).toBe(303);
    expect(ok.payment).toMatchObject({ status: 'SUCCEEDED', fraud: { action: 'allow', rule_id: r.id } });
  });

  it('when block list values are not of their kind, then 400 names value; the same value twice is 409', async () => {
    for (const [kind, value] of [['email', 'nobody'], ['client_ip', '10.0.0.1/24'], ['client_ip', 'example.com'], ['card_country', 'NGA'], ['card_fingerprint', '4242 4242']]) {
      const res = await t.request('POST', '/v1/fraud/lists', { key, body: { kind, value } });
      expect(res.status, `${kind} ${value}`).toBe(400);
      expect(res.body.error.param).toBe('value');
    }
    await listItem('email', 'twice@example.com');
    const dup = await t.request('POST', '/v1/fraud/lists', { key, body: { kind: 'email', value: 'TWICE@example.com' } });
    expect(dup.status).toBe(409);
  });

  it('when the blocked cards are read back, then no table holds a card number', async () => {
    const dump = await t.sql<{ j: string }[]>`select row_to_json(p)::text as j from payments p`;
    expect(dump.map((r) => r.j).join('\n')).not.toContain(DIGITS.nigeria);
  });
});
