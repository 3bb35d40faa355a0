import { beforeAll, describe, expect, it } from 'vitest';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession } from '../helpers/factories.ts';

// No workers: whatever expires or is sent here, the helper did it. Reminders every 3 days (the default), at most 3.
const t = useTestServer({ env: { INVOICE_REMINDER_INTERVAL_MS: String(3 * 86_400_000), INVOICE_REMINDER_LIMIT: '3' } });

const DAY = 86_400;
let key: string;
let live: string;
beforeAll(async () => {
  ({ test: key, live } = await t.account());
});

const advance = (seconds: unknown, k = key) => t.request('POST', '/v1/test-helpers/advance-time', { key: k, body: { seconds } });
const getSession = async (id: string, k = key) => (await t.request('GET', `/v1/checkout/sessions/${id}`, { key: k })).body;
const nowUnix = () => Math.floor(Date.now() / 1000);

async function sentInvoice(k: string, dueInSeconds: number) {
  const customer = (await t.request('POST', '/v1/customers', { key: k, body: { email: `payer-${Date.now()}-${Math.random()}@example.com` } })).body;
  const inv = await t.request('POST', '/v1/invoices', {
    key: k,
    body: { customer_id: customer.id, currency: 'usd', due_date: nowUnix() + dueInSeconds, line_items: [{ name: 'Oolong tea', quantity: 1, amount: 1200 }] },
  });
  const sent = await t.request('POST', `/v1/invoices/${inv.body.id}/send`, { key: k });
  if (sent.status !== 200) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
  return sent.body;
}
const reminders = (invoiceId: string) =>
  t.sql<{ dedupe_key: string }[]>`select dedupe_key from emails where related_object = ${invoiceId} and template = 'invoice_reminder' order by id`;

describe('advancing the time of a test account', () => {
  it('when a session expires in a day and time is advanced a day, then it is expired once with its event; advancing again does nothing more', async () => {
    const cs = await createSession(t, key);
    const soon = await createSession(t, key, { expires_at: nowUnix() + 3600 });
    expect(cs.expires_at).toBeGreaterThan(nowUnix() + DAY - 60);

    const hour = await advance(2 * 3600);
    expect(hour.status).toBe(200);
    expect(hour.body).toMatchObject({ object: 'test_helpers.time_advance', livemode: false, seconds: 7200, checkout_sessions_expired: 1, invoice_reminders_sent: 0, has_more: false });
    expect(hour.body.as_of).toBeGreaterThanOrEqual(nowUnix() + 7200 - 2);
    expect((await getSession(soon.id)).status).toBe('EXPIRED');
    expect((await getSession(cs.id)).status).toBe('OPEN');

    const day = await advance(DAY);
    expect(day.body.checkout_sessions_expired).toBe(1);
    const expired = await getSession(cs.id);
    // Expired as the delayed job does it: the event carries the session as the API shows it, and the object keeps its own times.
    expect(expired).toMatchObject({ status: 'EXPIRED', expires_at: cs.expires_at, created: cs.created });
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    expect((await eventObjects(t, cs.id))[0]!.object).toEqual(expired);
    expect(await t.s.queues.get('session-expiry').getJob(cs.id)).toBeUndefined();

    const again = await advance(DAY);
    expect(again.body.checkout_sessions_expired).toBe(0);
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
  });

  it('when a session waits on a 3-D Secure challenge, then advancing past its expiry fails the payment (session_expired) as the job does', async () => {
    const cs = await createSession(t, key);
    const paid = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/pay`, { key, body: { scenario: 'requires_3ds' } });
    expect(paid.body.payment.status).toBe('PENDING');
    expect((await advance(DAY)).body.checkout_sessions_expired).toBeGreaterThanOrEqual(1);
    expect((await getSession(cs.id)).status).toBe('EXPIRED');
    const payment = (await t.request('GET', `/v1/payments/${paid.body.payment.id}`, { key })).body;
    expect(payment).toMatchObject({ status: 'FAILED', failure_code: 'session_expired' });
    expect(await eventsFor(t, payment.id)).toEqual(['payment.failed']);
  });

  it('when an invoice\'s reminder falls due within the advance, then it is sent, one per call; the next comes an interval after it really went out', async () => {
    const inv = await sentInvoice(key, DAY);
    expect(inv.reminders).toMatchObject({ count: 0, next_at: inv.due_date });

    expect((await advance(DAY / 2)).body.invoice_reminders_sent).toBe(0);
    const first = await advance(DAY + 60);
    expect(first.body.invoice_reminders_sent).toBe(1);
    expect(await reminders(inv.id)).toEqual([{ dedupe_key: `invoice_reminder:${inv.id}:1` }]);
    const after = (await t.request('GET', `/v1/invoices/${inv.id}`, { key })).body;
    expect(after.reminders.count).toBe(1);
    expect(after.reminders.next_at).toBeGreaterThanOrEqual(nowUnix() + 3 * DAY - 5);
    expect(after.due_date).toBe(inv.due_date);

    // Looking a day ahead again finds nothing due: the second reminder is three days after the first went out.
    expect((await advance(DAY + 60)).body.invoice_reminders_sent).toBe(0);
    // Ten days ahead sends the second only: one reminder per call, the third planned from the second's real send.
    expect((await advance(10 * DAY)).body.invoice_reminders_sent).toBe(1);
    expect((await advance(10 * DAY)).body.invoice_reminders_sent).toBe(1);
    expect((await advance(10 * DAY)).body.invoice_reminders_sent).toBe(0); // the limit, 3
    expect((await reminders(inv.id)).map((r) => r.dedupe_key)).toEqual([1, 2, 3].map((n) => `invoice_reminder:${inv.id}:${n}`));
  });

  it('when time is advanced, then another account\'s objects and this account\'s live objects are untouched', async () => {
    const other = await t.account();
    const theirs = await createSession(t, other.test);
    const theirInvoice = await sentInvoice(other.test, 60);
    const ourLive = await createSession(t, live);

    await advance(30 * DAY);
    expect((await getSession(theirs.id, other.test)).status).toBe('OPEN');
    expect(await eventsFor(t, theirs.id)).toEqual([]);
    expect(await reminders(theirInvoice.id)).toEqual([]);
    expect((await getSession(ourLive.id, live)).status).toBe('OPEN');
  });

  it.each([
    ['missing', undefined, 'parameter_missing'],
    ['zero', 0, 'parameter_invalid'],
    ['negative', -60, 'parameter_invalid'],
    ['fractional', 1.5, 'parameter_invalid'],
    ['over 90 days', 90 * DAY + 1, 'parameter_invalid'],
    ['a string', '3600', 'parameter_invalid'],
  ])('when seconds is %s, then 400 %s naming seconds', async (_label, seconds, code) => {
    const res = await advance(seconds);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code, param: 'seconds' });
  });
});

describe('expiring a session now with the test helper', () => {
  it('when an OPEN session is expired by the helper, then it is EXPIRED with one event, as the API\'s expire; a second call is 400', async () => {
    const cs = await createSession(t, key);
    const res = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/expire`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(await getSession(cs.id));
    expect(res.body.status).toBe('EXPIRED');
    expect(await eventsFor(t, cs.id)).toEqual(['checkout.session.expired']);
    expect(await t.s.queues.get('session-expiry').getJob(cs.id)).toBeUndefined();

    const again = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/expire`, { key });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'resource_invalid_state' });
    const unknown = await t.request('POST', '/v1/test-helpers/checkout/sessions/cs_0000000000000000000000000000/expire', { key });
    expect(unknown.status).toBe(404);
    const extra = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.id}/expire`, { key, body: { at: 1 } });
    expect(extra.body.error).toMatchObject({ code: 'parameter_unknown', param: 'at' });
  });
});
