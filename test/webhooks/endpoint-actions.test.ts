import { describe, expect, it } from 'vitest';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { EVENT_TYPE_NAMES } from '../../src/events/catalogue.ts';
import { SAMPLE_ID } from '../../src/test-events/samples.ts';
import { verifyWithStripe } from './receiver.ts';
import { createEndpoint, emit } from './helpers.ts';
import { createSession } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';
import { useReceiver } from '../helpers/receiver.ts';

// The three actions added for the dashboard (issue 14): an endpoint's deliveries, retry-failed and
// the test event. Every worker runs; a short backoff makes a delivery FAILED in about a second.
const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: '20' } });
const rx = useReceiver((_n, r) => (r.path.startsWith('/down') && !healed.has(r.path) ? 500 : 200));
// Paths under /down answer 500 until a test heals them.
const healed = new Set<string>();

const forPath = (path: string) => (r: { path: string }) => r.path === path;
type Key = { accountId: string; test: string; live: string };

const rowsOf = (endpointId: string) =>
  t.sql<{ id: string; event_id: string; status: string; attempt_count: number; created_at: Date }[]>`
    select id, event_id, status, attempt_count, created_at from webhook_deliveries where endpoint_id = ${endpointId} order by id`;

/** An endpoint at `path` that answers 500, and `n` events whose deliveries to it have all FAILED. */
async function failing(a: Key, path: string, n: number, livemode = false) {
  const ep = await createEndpoint(t, livemode ? a.live : a.test, { url: `${rx.url}${path}` });
  const events = [];
  for (let i = 0; i < n; i++) events.push(await emit(t, a.accountId, livemode, 'payment.failed'));
  await eventually(async () => {
    const rows = await rowsOf(ep.id);
    return rows.length === n && rows.every((r) => r.status === 'FAILED');
  }, 30_000);
  return { ep, events };
}

describe('GET /v1/webhook-endpoints/:id/deliveries', () => {
  it('when an endpoint has deliveries, then they are listed newest first with their attempts, filtered by status and paged by cursor', async () => {
    const a = await t.account();
    const { ep, events: failed } = await failing(a, '/down-list', 2);
    healed.add('/down-list');
    const ok = await emit(t, a.accountId, false, 'payment.succeeded');
    await eventually(async () => (await rowsOf(ep.id)).some((r) => r.event_id === ok.id && r.status === 'SUCCEEDED'));

    const all = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key: a.test });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', url: `/v1/webhook-endpoints/${ep.id}/deliveries`, has_more: false });
    expect(all.body.data.map((d: { event_id: string }) => d.event_id)).toEqual([ok.id, failed[1]!.id, failed[0]!.id]);
    expect(all.body.data[0]).toMatchObject({ object: 'webhook_delivery', endpoint_id: ep.id, status: 'SUCCEEDED', attempt_count: 1 });
    expect(all.body.data[0]).not.toHaveProperty('event_type'); // the presenter's object, as /v1/events/:id/deliveries shows it
    expect(all.body.data[1].attempts).toHaveLength(7);
    expect(all.body.data[1].attempts[6]).toMatchObject({ attempt: 7, status_code: 500 });
    const dbIds = (await rowsOf(ep.id)).map((r) => r.id).reverse();
    expect(all.body.data.map((d: { id: string }) => d.id)).toEqual(dbIds);

    const onlyFailed = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries?status=FAILED`, { key: a.test });
    expect(onlyFailed.body.data.map((d: { status: string }) => d.status)).toEqual(['FAILED', 'FAILED']);
    const first = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries?limit=1`, { key: a.test });
    expect(first.body).toMatchObject({ has_more: true });
    expect(first.body.data.map((d: { id: string }) => d.id)).toEqual([dbIds[0]]);
    const next = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries?limit=1&starting_after=${dbIds[0]}`, { key: a.test });
    expect(next.body.data.map((d: { id: string }) => d.id)).toEqual([dbIds[1]]);
    const back = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries?limit=5&ending_before=${dbIds[2]}`, { key: a.test });
    expect(back.body.data.map((d: { id: string }) => d.id)).toEqual([dbIds[0], dbIds[1]]);
  });

  it.each([
    ['status=LOST', 'status'],
    ['status=failed', 'status'],
    ['limit=0', 'limit'],
    ['starting_after=evt_1', 'starting_after'],
    ['since=1', 'since'],
  ])('when the query has %s, then it answers 400 naming %s', async (query, param) => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/q` });
    const res = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries?${query}`, { key: a.test });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it("when another account, the other mode or a deleted endpoint is asked for, then it answers 404 and shows nothing", async () => {
    const a = await t.account();
    const b = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/tenancy` });
    await emit(t, a.accountId, false, 'payment.succeeded');
    for (const key of [b.test, a.live]) {
      const res = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'resource_missing' });
    }
    await t.request('DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: a.test });
    expect((await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key: a.test })).status).toBe(404);
  });
});

describe('POST /v1/webhook-endpoints/:id/retry-failed', () => {
  it.each([
    [{}, 'parameter_missing', 'since'],
    [{ since: 'yesterday' }, 'parameter_invalid', 'since'],
    [{ since: -1 }, 'parameter_invalid', 'since'],
    [{ since: 1.5 }, 'parameter_invalid', 'since'],
    [{ since: 0, status: 'FAILED' }, 'parameter_unknown', 'status'],
  ])('when the body is %j, then it answers 400 %s naming %s and sends nothing', async (body, code, param) => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/bad-retry` });
    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.test, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code, param });
    expect(await rowsOf(ep.id)).toEqual([]);
  });

  it('when failed deliveries are retried since a time, then each failed event since then is sent again once as a new delivery, and a second call sends nothing', async () => {
    const a = await t.account();
    const { ep, events } = await failing(a, '/down-retry', 3);
    // The first event's delivery failed an hour ago: before `since`, so it stays as it is.
    const old = (await rowsOf(ep.id)).find((r) => r.event_id === events[0]!.id)!;
    await t.sql`update webhook_deliveries set created_at = now() - interval '1 hour' where id = ${old.id}`;
    const other = await createEndpoint(t, a.test, { url: `${rx.url}/retry-other` });
    healed.add('/down-retry');
    const since = Math.floor(Date.now() / 1000) - 600;

    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.test, body: { since } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', url: `/v1/webhook-endpoints/${ep.id}/retry-failed`, has_more: false });
    expect(res.body.data.map((d: { event_id: string }) => d.event_id)).toEqual([events[1]!.id, events[2]!.id]);
    expect(res.body.data.every((d: { status: string; attempt_count: number; endpoint_id: string }) => d.status === 'PENDING' && d.attempt_count === 0 && d.endpoint_id === ep.id)).toBe(true);

    await rx.waitFor(3 * 7 + 2, 10_000, forPath('/down-retry'));
    await eventually(async () => (await rowsOf(ep.id)).filter((r) => r.status === 'SUCCEEDED').length === 2);
    const rows = await rowsOf(ep.id);
    expect(rows).toHaveLength(5);
    expect(rows.filter((r) => r.event_id === events[0]!.id).map((r) => r.status)).toEqual(['FAILED']);
    for (const e of events.slice(1)) expect(rows.filter((r) => r.event_id === e.id).map((r) => r.status)).toEqual(['FAILED', 'SUCCEEDED']);
    const received = rx.received.filter(forPath('/down-retry')).map((r) => JSON.parse(r.body).id);
    expect(received.slice(-2).sort()).toEqual([events[1]!.id, events[2]!.id].sort());
    expect(await rowsOf(other.id)).toEqual([]); // no fan-out: only this endpoint

    const again = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.test, body: { since } });
    expect(again.body.data).toEqual([]);
    expect(await rowsOf(ep.id)).toHaveLength(5);
    // Since 0: the hour-old one now, and only it.
    const everything = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.test, body: { since: 0 } });
    expect(everything.body.data.map((d: { event_id: string }) => d.event_id)).toEqual([events[0]!.id]);
  });

  it('when ten retry-alls of one endpoint run at once, then each failed event is sent again exactly once', async () => {
    const a = await t.account();
    const { ep, events } = await failing(a, '/down-race', 4);
    healed.add('/down-race');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.test, body: { since: 0 } })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    const sent = answers.flatMap((r) => r.body.data.map((d: { event_id: string }) => d.event_id));
    expect(sent.sort()).toEqual(events.map((e) => e.id).sort());
    const rows = await rowsOf(ep.id);
    expect(rows).toHaveLength(8);
    for (const e of events) expect(rows.filter((r) => r.event_id === e.id)).toHaveLength(2);
    await eventually(async () => (await rowsOf(ep.id)).filter((r) => r.status === 'SUCCEEDED').length === 4);
    expect(rx.received.filter(forPath('/down-race'))).toHaveLength(4 * 7 + 4);
  });

  it('when the endpoint is paused, then the retried deliveries wait PAUSED and go out when it is resumed', async () => {
    const a = await t.account();
    const { ep } = await failing(a, '/down-paused', 1);
    healed.add('/down-paused');
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.test, body: { since: 0 } });
    expect(res.body.data.map((d: { status: string }) => d.status)).toEqual(['PAUSED']);
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: true } });
    await eventually(async () => (await rowsOf(ep.id)).map((r) => r.status).join() === 'FAILED,SUCCEEDED');
  });

  it('when another account or the other mode asks, then it answers 404 and sends nothing; a live endpoint is retried with the live key', async () => {
    const a = await t.account();
    const b = await t.account();
    const { ep } = await failing(a, '/down-live', 1, true);
    for (const key of [b.live, a.test]) {
      const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key, body: { since: 0 } });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    }
    expect(await rowsOf(ep.id)).toHaveLength(1);
    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/retry-failed`, { key: a.live, body: { since: 0 } });
    expect(res.body.data).toEqual([expect.objectContaining({ livemode: true, endpoint_id: ep.id })]);
  });
});

describe('POST /v1/webhook-endpoints/:id/test', () => {
  it('when a test event is sent, then only that endpoint receives a signed sample, recorded as a delivery, readable by id and never listed', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/test-one`, enabled_events: ['invoice.paid'] });
    const bystander = await createEndpoint(t, a.test, { url: `${rx.url}/test-bystander`, enabled_events: ['*'] });

    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.test, body: { type: 'payment.succeeded' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'webhook_delivery', endpoint_id: ep.id, status: 'PENDING', livemode: false });
    const [req] = await rx.waitFor(1, 10_000, forPath('/test-one'));
    const verified = verifyWithStripe(req!, ep.signing_secret);
    expect(verified.id).toBe(res.body.event_id);
    const body = JSON.parse(req!.body);
    expect(body).toMatchObject({ object: 'event', type: 'payment.succeeded', livemode: false });
    expect(body.data.object).toMatchObject({ object: 'payment', status: 'SUCCEEDED', livemode: false, amount_cents: 2500 });
    expect(body.data.object.id).toMatch(SAMPLE_ID);
    expect(body.data.object.checkout_session_id).toMatch(SAMPLE_ID);
    expect((await t.request('GET', `/v1/payments/${body.data.object.id}`, { key: a.test })).status).toBe(404);

    // Stored and delivered like any event, marked as a sample.
    const [row] = await t.sql`select sample, type from events where id = ${body.id}`;
    expect(row).toEqual({ sample: true, type: 'payment.succeeded' });
    await eventually(async () => (await rowsOf(ep.id))[0]?.status === 'SUCCEEDED');
    const byId = await t.request('GET', `/v1/events/${body.id}`, { key: a.test });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(body);
    const listed = await t.request('GET', '/v1/events?limit=100', { key: a.test });
    expect(listed.body.data.map((e: { id: string }) => e.id)).not.toContain(body.id);
    const typed = await t.request('GET', '/v1/events?type=payment.succeeded', { key: a.test });
    expect(typed.body.data).toEqual([]);
    const deliveries = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key: a.test });
    expect(deliveries.body.data).toEqual([expect.objectContaining({ event_id: body.id, status: 'SUCCEEDED', attempt_count: 1 })]);
    expect(deliveries.body.data[0].attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200 })]);

    // Never to another endpoint, not even by a resend.
    expect(await rowsOf(bystander.id)).toEqual([]);
    const resent = await t.request('POST', `/v1/events/${body.id}/resend`, { key: a.test });
    expect(resent.body.data).toEqual([expect.objectContaining({ endpoint_id: ep.id })]);
    const elsewhere = await t.request('POST', `/v1/events/${body.id}/resend`, { key: a.test, body: { endpoint_id: bystander.id } });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error).toMatchObject({ code: 'parameter_invalid', param: 'endpoint_id' });
    await rx.waitFor(2, 10_000, forPath('/test-one'));
    expect(await rowsOf(bystander.id)).toEqual([]);
    expect(rx.received.filter(forPath('/test-bystander'))).toEqual([]);
  });

  it('when a sample is made for each type, then it is the full object of that resource, with the same fields a real one has, and ids that match no record', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/test-all` });
    for (const type of EVENT_TYPE_NAMES) {
      const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.test, body: { type } });
      expect(res.status, type).toBe(200);
    }
    const got = await rx.waitFor(EVENT_TYPE_NAMES.length, 15_000, forPath('/test-all'));
    const byType = new Map(got.map((r) => JSON.parse(r.body)).map((e) => [e.type as string, e.data.object]));
    expect([...byType.keys()].sort()).toEqual([...EVENT_TYPE_NAMES].sort());
    const kind = (type: string) =>
      type.startsWith('checkout.session') ? 'checkout_session' : (type.split('.')[0] as string);
    for (const [type, object] of byType) {
      expect(object.object, type).toBe(kind(type));
      expect(object.id, type).toMatch(SAMPLE_ID);
      for (const ref of ['customer_id', 'payment_id', 'checkout_session_id']) if (object[ref]) expect(object[ref], `${type} ${ref}`).toMatch(SAMPLE_ID);
    }
    expect(byType.get('payment.failed')).toMatchObject({ status: 'FAILED', failure_code: 'card_declined' });
    expect(byType.get('payment.refunded')).toMatchObject({ refunded: true, amount_refunded_cents: 2500 });
    expect(byType.get('invoice.paid')).toMatchObject({ status: 'PAID', amount_due_cents: 0, number: 'INV-0000' });
    expect(byType.get('dispute.closed')).toMatchObject({ status: 'WON' });

    // The same fields, in the same order, as the real objects of the API.
    const cs = await createSession(t, a.test, { amount: 2500 });
    await new Payer(t).pay(cs.id, { card_number: CARDS.visa });
    const session = (await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key: a.test })).body;
    const payment = (await t.request('GET', `/v1/payments/${session.payment_id}`, { key: a.test })).body;
    const refund = (await t.request('POST', '/v1/refunds', { key: a.test, body: { payment_id: payment.id } })).body;
    const customer = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'c@example.com' } })).body;
    const invoice = (await t.request('POST', '/v1/invoices', { key: a.test, body: { customer_id: customer.id, currency: 'usd', line_items: [{ name: 'x', quantity: 1, amount: 100 }] } })).body;
    expect(Object.keys(byType.get('checkout.session.completed'))).toEqual(Object.keys(session));
    expect(Object.keys(byType.get('payment.succeeded'))).toEqual(Object.keys(payment));
    expect(Object.keys(byType.get('refund.created'))).toEqual(Object.keys(refund));
    expect(Object.keys(byType.get('invoice.created'))).toEqual(Object.keys(invoice));
  });

  it.each([
    [{}, 'parameter_missing', 'type'],
    [{ type: 'payment.maybe' }, 'parameter_invalid', 'type'],
    [{ type: '*' }, 'parameter_invalid', 'type'],
    [{ type: 7 }, 'parameter_invalid', 'type'],
    [{ type: 'payment.succeeded', endpoint_id: 'we_x' }, 'parameter_unknown', 'endpoint_id'],
  ])('when the body is %j, then it answers 400 %s naming %s and records nothing', async (body, code, param) => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/test-bad` });
    const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.test, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code, param });
    expect(await t.sql`select 1 from events where account_id = ${a.accountId}`).toHaveLength(0);
  });

  it('when the endpoint is paused, of another account or of the other mode, then nothing is sent (400, 404, 404)', async () => {
    const a = await t.account();
    const b = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/test-refused` });
    for (const key of [b.test, a.live]) {
      const res = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key, body: { type: 'payment.succeeded' } });
      expect(res.status).toBe(404);
    }
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    const paused = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.test, body: { type: 'payment.succeeded' } });
    expect(paused.status).toBe(400);
    expect(paused.body.error.code).toBe('resource_invalid_state');
    expect(await t.sql`select 1 from events where account_id = ${a.accountId}`).toHaveLength(0);
    expect(await rowsOf(ep.id)).toEqual([]);
  });

  it('when a live endpoint is sent a test event, then the sample is a live object with sample ids; a replay of its Idempotency-Key sends nothing more', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.live, { url: `${rx.url}/test-live` });
    const headers = { 'idempotency-key': 'test-event-1' };
    const first = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.live, body: { type: 'checkout.session.completed' }, headers });
    const second = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.live, body: { type: 'checkout.session.completed' }, headers });
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const [req] = await rx.waitFor(1, 10_000, forPath('/test-live'));
    const event = verifyWithStripe(req!, ep.signing_secret) as unknown as { livemode: boolean; data: { object: { id: string; livemode: boolean } } };
    expect(event.livemode).toBe(true);
    expect(event.data.object).toMatchObject({ object: 'checkout_session', livemode: true, status: 'COMPLETE' });
    expect(event.data.object.id).toMatch(SAMPLE_ID);
    expect(await t.sql`select livemode, sample from events where account_id = ${a.accountId}`).toEqual([{ livemode: true, sample: true }]);
    expect(await rowsOf(ep.id)).toHaveLength(1);
  });
});
