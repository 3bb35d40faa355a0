import { createHmac, timingSafeEqual } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { emit } from '../helpers/events.ts';
import { createEndpoint, createSession } from '../helpers/factories.ts';
import { type Received, useReceiver } from '../helpers/receiver.ts';

const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
type Account = { accountId: string; test: string; live: string };
const rx = useReceiver((_n, r) => (r.path.startsWith('/broken') ? { status: 500, body: '<b>Down for "maintenance"</b> & more' } : 200));


/** The README's verifier: `v1` is the hex HMAC-SHA256, keyed by the whole whsec_ string, of `<t>.<raw body>`. */
function verifySignature(rawBody: string, header: unknown, secret: string, toleranceSeconds = 300): boolean {
  const pairs = String(header).split(',').map((part) => part.split('='));
  const ts = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${rawBody}`).digest();
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '') && timingSafeEqual(Buffer.from(v!, 'hex'), expected));
}

const forPath = (p: string) => (r: Received) => r.path === p;
const unescape = (s: string) => s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
/** The payload block of an event page, parsed. */
const payloadOf = (page: string) => JSON.parse(unescape(/<pre tabindex="0"><code>([^]*?)<\/code><\/pre>/.exec(page)![1]!));
/** The event ids of a list page, in the order shown. */
const listedIds = (page: string) => [...page.matchAll(/href="\/dashboard\/events\/(evt_[0-9a-z]+)"/g)].map((m) => m[1]!);

async function expiredSessionEvent(key: string): Promise<{ eventId: string; sessionId: string }> {
  const cs = await createSession(t, key, { amount: 2500 });
  const res = await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
  expect(res.status).toBe(200);
  const list = await t.request('GET', '/v1/events?type=checkout.session.expired&limit=100', { key });
  const event = list.body.data.find((e: { data: { object: { id: string } } }) => e.data.object.id === cs.id);
  return { eventId: event.id, sessionId: cs.id };
}

const deliveries = (eventId: string) =>
  t.sql<{ id: string; endpoint_id: string; status: string; attempt_count: number }[]>`
    select id, endpoint_id, status, attempt_count from webhook_deliveries where event_id = ${eventId} order by id`;
const eventCount = async (accountId: string) => Number((await t.sql`select count(*)::int as n from events where account_id = ${accountId}`)[0]!.n);

describe('the events list', () => {
  let a: Account;
  let c: DashClient;
  const expired: string[] = [];
  let paid: string[] = [];

  beforeAll(async () => {
    a = await t.account();
    for (let i = 0; i < 3; i++) expired.push((await expiredSessionEvent(a.test)).eventId);
    const cs = await createSession(t, a.test, { amount: 1200 });
    await new Payer(t).pay(cs.id);
    const all = await t.request('GET', '/v1/events?limit=100', { key: a.test });
    paid = all.body.data.filter((e: { type: string }) => e.type !== 'checkout.session.expired').map((e: { id: string }) => e.id);
    await emit(t, a.accountId, true, 'payment.succeeded'); // live: never in the test list
    c = await signedIn(t, a.accountId, 'events-list@example.com');
  });

  it('when opened, then it lists the mode’s events newest first with type, object kind and id, and time', async () => {
    const page = await c.get('/dashboard/events');
    expect(page.status).toBe(200);
    const api = await t.request('GET', '/v1/events?limit=100', { key: a.test });
    expect(listedIds(page.html)).toEqual(api.body.data.map((e: { id: string }) => e.id));
    expect(listedIds(page.html)).toHaveLength(5); // 3 expired, completed + payment.succeeded; the live one left out
    expect(paid).toHaveLength(2);
    const first = api.body.data[0];
    expect(page.html).toContain(first.type);
    expect(page.html).toContain(first.data.object.id);
    expect(page.html).toContain('Checkout session');
    expect(page.html).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    // The type filter offers the catalogue.
    expect(page.html).toContain('<option value="invoice.marked_uncollectible">');
  });

  it('when filtered by type, then only that type is listed and the choice stays selected', async () => {
    const page = await c.get('/dashboard/events?type=checkout.session.expired');
    expect(page.status).toBe(200);
    expect(listedIds(page.html)).toEqual([...expired].reverse());
    expect(page.html).toContain('<option value="checkout.session.expired" selected>');
    const none = await c.get('/dashboard/events?type=invoice.paid');
    expect(listedIds(none.html)).toEqual([]);
    expect(none.html).toContain('No event matches these filters.');
  });

  it('when filtered by a day range, then the API’s created bounds apply (the days read as UTC)', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(listedIds((await c.get(`/dashboard/events?from=${today}&to=${today}`)).html)).toHaveLength(5);
    expect(listedIds((await c.get(`/dashboard/events?from=${tomorrow}`)).html)).toHaveLength(0);
    expect(listedIds((await c.get(`/dashboard/events?to=${yesterday}`)).html)).toHaveLength(0);
    // The API's own spelling works too.
    const now = Math.floor(Date.now() / 1000);
    expect(listedIds((await c.get(`/dashboard/events?created[gte]=${now + 3600}`)).html)).toHaveLength(0);
    expect(listedIds((await c.get(`/dashboard/events?created[lte]=${now + 3600}&type=payment.succeeded`)).html)).toHaveLength(1);
  });

  it('when paged with a small limit, then Older and Newer walk the list by cursor, keeping the filter', async () => {
    const p1 = await c.get('/dashboard/events?type=checkout.session.expired&limit=2');
    expect(listedIds(p1.html)).toEqual([expired[2], expired[1]]);
    const older = /href="([^"]+)" rel="next"/.exec(p1.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toContain('type=checkout.session.expired');
    expect(older).toContain(`starting_after=${expired[1]}`);
    expect(p1.html).not.toContain('rel="prev"');
    const p2 = await c.get(older);
    expect(listedIds(p2.html)).toEqual([expired[0]]);
    expect(p2.html).not.toContain('rel="next"');
    const newer = /href="([^"]+)" rel="prev"/.exec(p2.html)![1]!.replaceAll('&amp;', '&');
    expect(newer).toContain(`ending_before=${expired[0]}`);
    // limit is not carried by the pager: the default page (10) holds both remaining rows.
    expect(listedIds((await c.get(newer)).html)).toEqual([expired[2], expired[1]]);
  });

  it.each([
    ['type=nope', 'type'],
    ['limit=0', 'limit'],
    ['created[gte]=yesterday', 'created[gte]'],
    ['from=2026-02-30', 'from'],
    ['to=soon', 'to'],
    ['starting_after=cus_00000000000000000000000000', 'starting_after'],
    ['colour=red', 'colour'],
  ])('when the filter is bad (%s), then a 400 page names %s', async (query, name) => {
    const page = await c.get(`/dashboard/events?${query}`);
    expect(page.status).toBe(400);
    const alert = unescape(/<div class="alert info" role="status">([^<]*)<\/div>/.exec(page.html)![1]!);
    expect(alert).toMatch(new RegExp(`^(Invalid|Received unknown parameter:) ${name.replace(/[[\]]/g, '\\$&')}(:|$)`));
    expect(page.html).not.toContain('<table>');
  });
});

describe('an event’s page', () => {
  let a: Account;
  let c: DashClient;

  beforeAll(async () => {
    a = await t.account();
    c = await signedIn(t, a.accountId, 'events-detail@example.com');
  });

  it('when opened, then it shows the facts, the object’s link, the whole payload and each delivery with its attempts', async () => {
    const ok = await createEndpoint(t, a.test, { url: `${rx.url}/detail-ok`, enabled_events: ['checkout.session.expired'] });
    const broken = await createEndpoint(t, a.test, { url: `${rx.url}/broken-detail`, enabled_events: ['*'] });
    const { eventId, sessionId } = await expiredSessionEvent(a.test);
    await rx.waitFor(1, 10_000, forPath('/detail-ok'));
    await rx.waitFor(1, 10_000, forPath('/broken-detail'));
    await eventually(async () => (await deliveries(eventId)).every((d) => d.attempt_count === 1));

    const page = await c.get(`/dashboard/events/${eventId}`);
    expect(page.status).toBe(200);
    const api = await t.request('GET', `/v1/events/${eventId}`, { key: a.test });
    expect(payloadOf(page.html)).toEqual(api.body);
    expect(page.html).toContain('<h1>checkout.session.expired</h1>');
    expect(page.html).toContain(eventId);
    expect(page.html).toContain('2026-11-01');
    expect(page.html).toContain(`<a href="/dashboard/checkout-sessions/${sessionId}">`);
    // Two deliveries: each names its endpoint's URL and status, and its attempt.
    const [dOk, dBroken] = [(await deliveries(eventId)).find((d) => d.endpoint_id === ok.id)!, (await deliveries(eventId)).find((d) => d.endpoint_id === broken.id)!];
    const block = (id: string) => new RegExp(`data-delivery="${id}"[^]*?</section>`).exec(page.html)![0];
    expect(block(dOk.id)).toContain(`${rx.url}/detail-ok`);
    expect(block(dOk.id)).toContain('SUCCEEDED');
    expect(block(dOk.id)).toMatch(/<td class="num" data-label="Status code"><span class="badge good">200<\/span><\/td><td class="num" data-label="Duration">\d+ ms<\/td>/);
    expect(block(dOk.id)).toContain('answer 200');
    expect(block(dBroken.id)).toContain('PENDING');
    expect(block(dBroken.id)).toContain('Next attempt');
    expect(block(dBroken.id)).toContain('<span class="badge bad">500</span>');
    // The receiver's answer is shown escaped, never as markup.
    expect(block(dBroken.id)).toContain('<code class="excerpt">&lt;b&gt;Down for &quot;maintenance&quot;&lt;/b&gt; &amp; more</code>');
    expect(page.html).not.toContain('<b>Down');
    // The resend choices: both endpoints of the mode.
    expect(page.html).toContain(`<option value="${ok.id}">${rx.url}/detail-ok</option>`);
    expect(page.html).toContain(`<option value="${broken.id}">${rx.url}/broken-detail</option>`);
    expect(page.html).toContain('to the 2 endpoints of test mode subscribed to checkout.session.expired now');

    // Once the endpoint is deleted, its delivery says so.
    expect((await t.request('DELETE', `/v1/webhook-endpoints/${broken.id}`, { key: a.test })).status).toBe(200);
    const after = await c.get(`/dashboard/events/${eventId}`);
    expect(new RegExp(`data-delivery="${dBroken.id}"[^]*?</section>`).exec(after.html)![0]).toContain('Deleted endpoint');
    expect(after.html).toContain('CANCELLED');
  });

  it('when the object is a refund or a dispute, then it links to its payment', async () => {
    const refund = { id: 're_00000000000000000000000001', object: 'refund', livemode: false, payment_id: 'pay_00000000000000000000000001', amount_cents: 100 };
    const ev = await emit(t, a.accountId, false, 'refund.created', refund as never);
    const page = await c.get(`/dashboard/events/${ev.id}`);
    expect(page.html).toContain('<a href="/dashboard/payments/pay_00000000000000000000000001"><span class="mono">re_00000000000000000000000001</span></a>');
    expect(page.html).toContain('No delivery: no endpoint was subscribed');
  });

  it('when there are more deliveries than a page, then they are paged by cursor', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/paged`, enabled_events: ['payment.failed'] });
    const ev = await emit(t, a.accountId, false, 'payment.failed');
    for (let i = 0; i < 11; i++) expect((await t.request('POST', `/v1/events/${ev.id}/resend`, { key: a.test, body: { endpoint_id: ep.id } })).status).toBe(200);
    const rows = await deliveries(ev.id);
    expect(rows).toHaveLength(12);
    const p1 = await c.get(`/dashboard/events/${ev.id}`);
    const shown = (h: string) => [...h.matchAll(/data-delivery="(wd_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(shown(p1.html)).toEqual(rows.map((r) => r.id).reverse().slice(0, 10));
    const older = /href="([^"]+)" rel="next"/.exec(p1.html)![1]!.replaceAll('&amp;', '&');
    const p2 = await c.get(older);
    expect(shown(p2.html)).toEqual([rows[1]!.id, rows[0]!.id]);
    expect((await c.get(`/dashboard/events/${ev.id}?starting_after=nope`)).status).toBe(400);
  });
});

describe('Resend from the dashboard, end to end', () => {
  let a: Account;
  let c: DashClient;
  let one: Awaited<ReturnType<typeof createEndpoint>>;
  let two: Awaited<ReturnType<typeof createEndpoint>>;
  let eventId: string;

  beforeAll(async () => {
    a = await t.account();
    // A receiver registered through the API: one endpoint for session expiries, one for everything.
    one = await createEndpoint(t, a.test, { url: `${rx.url}/e2e-one`, enabled_events: ['checkout.session.expired'] });
    two = await createEndpoint(t, a.test, { url: `${rx.url}/e2e-two`, enabled_events: ['*'] });
    ({ eventId } = await expiredSessionEvent(a.test));
    await rx.waitFor(1, 10_000, forPath('/e2e-one'));
    await rx.waitFor(1, 10_000, forPath('/e2e-two'));
    c = await signedIn(t, a.accountId, 'events-e2e@example.com');
  });

  it('when Resend to all is pressed, then every subscribed endpoint receives the same event again, signed, and the page shows the new deliveries with their attempts', async () => {
    const before = await deliveries(eventId);
    const events = await eventCount(a.accountId);
    expect((await c.get(`/dashboard/events/${eventId}`)).status).toBe(200);
    const res = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'all' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/events/${eventId}?done=resent&count=2&paused=0#deliveries`);

    const api = (await t.request('GET', `/v1/events/${eventId}`, { key: a.test })).body;
    const [, againOne] = await rx.waitFor(2, 10_000, forPath('/e2e-one'));
    const [, againTwo] = await rx.waitFor(2, 10_000, forPath('/e2e-two'));
    for (const [r, ep] of [[againOne!, one], [againTwo!, two]] as const) {
      expect(verifySignature(r.body, r.headers['service-signature'], ep.signing_secret)).toBe(true);
      expect(verifySignature(r.body, r.headers['service-signature'], ep === one ? two.signing_secret : one.signing_secret)).toBe(false);
      expect(JSON.parse(r.body)).toEqual(api); // the same event id and payload
      expect(r.headers['service-event-id']).toBe(eventId);
    }

    // Two new delivery rows (new ids), each with one stored attempt: 200 and its duration.
    const rows = await eventually(async () => {
      const all = await deliveries(eventId);
      const fresh = all.filter((d) => !before.some((b) => b.id === d.id));
      return fresh.length === 2 && fresh.every((d) => d.status === 'SUCCEEDED') && fresh;
    });
    expect(rows.map((d) => d.endpoint_id).sort()).toEqual([one.id, two.id].sort());
    expect(new Set([againOne!.headers['service-delivery-id'], againTwo!.headers['service-delivery-id']])).toEqual(new Set(rows.map((d) => d.id)));
    const attempts = await t.sql`select delivery_id, attempt, status_code, duration_ms from webhook_attempts where delivery_id = any(${rows.map((d) => d.id)}) order by delivery_id`;
    expect(attempts).toHaveLength(2);
    for (const at of attempts) expect(at).toMatchObject({ attempt: 1, status_code: 200, duration_ms: expect.any(Number) });
    expect(await eventCount(a.accountId)).toBe(events); // a resend is no new event

    const page = await c.get(res.location!);
    expect(page.html).toContain('Event resent: 2 new deliveries were created.');
    for (const d of rows) {
      const block = new RegExp(`data-delivery="${d.id}"[^]*?</section>`).exec(page.html)![0];
      expect(block).toContain('SUCCEEDED');
      expect(block).toMatch(/<span class="badge good">200<\/span><\/td><td class="num" data-label="Duration">\d+ ms<\/td>/);
    }
  });

  it('when Resend to one endpoint is pressed, then only that endpoint receives it, signed, as one new delivery', async () => {
    const before = await deliveries(eventId);
    const countOne = rx.received.filter(forPath('/e2e-one')).length;
    await c.get(`/dashboard/events/${eventId}`);
    const res = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: two.id });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/events/${eventId}?done=resent&count=1&paused=0#deliveries`);
    const got = await rx.waitFor(3, 10_000, forPath('/e2e-two'));
    const r = got[2]!;
    expect(verifySignature(r.body, r.headers['service-signature'], two.signing_secret)).toBe(true);
    expect(JSON.parse(r.body).id).toBe(eventId);
    const fresh = await eventually(async () => {
      const all = (await deliveries(eventId)).filter((d) => !before.some((b) => b.id === d.id));
      return all.length === 1 && all[0]!.status === 'SUCCEEDED' && all[0];
    });
    expect(fresh).toMatchObject({ endpoint_id: two.id, attempt_count: 1 });
    expect(r.headers['service-delivery-id']).toBe(fresh.id);
    expect(rx.received.filter(forPath('/e2e-one'))).toHaveLength(countOne);
    const page = await c.get(res.location!);
    expect(page.html).toContain('Event resent: 1 new delivery was created.');
    // The API sees the same deliveries as the page: 2 original + 2 + 1.
    const api = await t.request('GET', `/v1/events/${eventId}/deliveries?limit=100`, { key: a.test });
    expect(api.body.data).toHaveLength(5);
    for (const d of api.body.data) expect(page.html).toContain(`data-delivery="${d.id}"`);
  });

  it('when the same form is submitted twice, then the event is resent once and both answers go to the same place', async () => {
    const before = (await deliveries(eventId)).length;
    await c.get(`/dashboard/events/${eventId}`);
    const key = formKey();
    const first = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: one.id, idempotency_key: key });
    const second = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: one.id, idempotency_key: key });
    expect(first.status).toBe(303);
    expect(second.status).toBe(303);
    expect(second.location).toBe(first.location);
    expect(await deliveries(eventId)).toHaveLength(before + 1);
  });

  it('when no endpoint is subscribed to the type, then Resend to all creates nothing and says so', async () => {
    await t.request('PATCH', `/v1/webhook-endpoints/${two.id}`, { key: a.test, body: { enabled_events: ['checkout.session.expired'] } });
    try {
      const ev = await emit(t, a.accountId, false, 'invoice.voided', { id: 'in_00000000000000000000000001', object: 'invoice', livemode: false });
      const page = await c.get(`/dashboard/events/${ev.id}`);
      expect(page.html).toContain('No endpoint of test mode is subscribed to invoice.voided now');
      expect(page.html).toContain('<a href="/dashboard/invoices/in_00000000000000000000000001">');
      const res = await c.post(`/dashboard/events/${ev.id}/resend`, { to: 'all' });
      expect(res.location).toBe(`/dashboard/events/${ev.id}?done=resent&count=0&paused=0#deliveries`);
      expect(await deliveries(ev.id)).toHaveLength(0);
      expect((await c.get(res.location!)).html).toContain('Nothing was resent: no endpoint of test mode is subscribed to invoice.voided.');
    } finally {
      await t.request('PATCH', `/v1/webhook-endpoints/${two.id}`, { key: a.test, body: { enabled_events: ['*'] } });
    }
  });

  it('when the chosen endpoint is disabled, then its delivery waits PAUSED and the notice says so', async () => {
    await t.request('PATCH', `/v1/webhook-endpoints/${one.id}`, { key: a.test, body: { is_active: false } });
    try {
      const page = await c.get(`/dashboard/events/${eventId}`);
      expect(page.html).toContain(`<option value="${one.id}">${rx.url}/e2e-one (disabled)</option>`);
      const res = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: one.id });
      expect(res.location).toBe(`/dashboard/events/${eventId}?done=resent&count=1&paused=1#deliveries`);
      expect((await c.get(res.location!)).html).toContain('It waits for a disabled endpoint to be enabled again.');
      const [last] = (await deliveries(eventId)).slice(-1);
      expect(last).toMatchObject({ endpoint_id: one.id, status: 'PAUSED', attempt_count: 0 });
    } finally {
      await t.request('DELETE', `/v1/webhook-endpoints/${one.id}`, { key: a.test });
    }
  });
});

describe('a sample sent by a test event', () => {
  it('when opened by id, then it says it is a sample, and Resend sends it only to the endpoint it went to', async () => {
    const a = await t.account();
    const target = await createEndpoint(t, a.test, { url: `${rx.url}/sample-target`, enabled_events: ['payment.succeeded'] });
    const other = await createEndpoint(t, a.test, { url: `${rx.url}/sample-other`, enabled_events: ['*'] });
    const sent = await t.request('POST', `/v1/webhook-endpoints/${target.id}/test`, { key: a.test, body: { type: 'payment.succeeded' } });
    expect(sent.status).toBe(200);
    const eventId = sent.body.event_id as string;
    await rx.waitFor(1, 10_000, forPath('/sample-target'));
    const c = await signedIn(t, a.accountId, 'events-sample@example.com');
    expect(listedIds((await c.get('/dashboard/events')).html)).not.toContain(eventId);
    const page = await c.get(`/dashboard/events/${eventId}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Sent by a test event from Webhooks');
    expect(page.html).toContain(`<option value="${target.id}">`);
    expect(page.html).not.toContain(`<option value="${other.id}">`);

    const toOther = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: other.id });
    expect(toOther.status).toBe(400);
    expect(toOther.html).toContain('it can only be sent again to the endpoint it was sent to');
    const all = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'all' });
    expect(all.location).toBe(`/dashboard/events/${eventId}?done=resent&count=1&paused=0#deliveries`);
    expect((await deliveries(eventId)).map((d) => d.endpoint_id)).toEqual([target.id, target.id]);
    await rx.waitFor(2, 10_000, forPath('/sample-target'));
    expect(rx.received.filter(forPath('/sample-other'))).toHaveLength(0);
  });
});

describe('who may see and resend', () => {
  let a: Account;
  let b: Account;
  let c: DashClient;
  let eventId: string;
  let liveEventId: string;
  let mine: Awaited<ReturnType<typeof createEndpoint>>;
  let theirs: Awaited<ReturnType<typeof createEndpoint>>;
  let liveMine: Awaited<ReturnType<typeof createEndpoint>>;
  let theirEventId: string;

  beforeAll(async () => {
    a = await t.account();
    b = await t.account();
    eventId = (await emit(t, a.accountId, false, 'payment.failed')).id;
    liveEventId = (await emit(t, a.accountId, true, 'payment.failed')).id;
    theirEventId = (await emit(t, b.accountId, false, 'payment.failed')).id;
    // Created after the events, so that no delivery exists yet.
    mine = await createEndpoint(t, a.test, { url: `${rx.url}/acl-mine` });
    theirs = await createEndpoint(t, b.test, { url: `${rx.url}/acl-theirs` });
    liveMine = await createEndpoint(t, a.live, { url: `${rx.url}/acl-live` });
    c = await signedIn(t, a.accountId, 'events-acl@example.com');
  });

  const resendTo = (endpoint: string) => c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: endpoint });

  it.each([
    ['another account’s endpoint', () => theirs.id],
    ['the live endpoint of the same account', () => liveMine.id],
    ['an unknown endpoint id', () => 'we_00000000000000000000000000'],
    ['something that is no endpoint id', () => 'nope'],
  ])('when %s is chosen, then a 404 page names it and no delivery is made', async (_what, id) => {
    await c.get(`/dashboard/events/${eventId}`);
    const res = await resendTo(id());
    expect(res.status).toBe(404);
    expect(res.html).toContain(`No such webhook_endpoint: &#39;${id()}&#39;`);
    expect(res.html).toContain('class="field-error"');
    expect(res.html).not.toContain(`value="${theirs.id}"`);
    expect(await deliveries(eventId)).toHaveLength(0);
  });

  it('when Resend to one endpoint comes without an endpoint, then a 400 names it', async () => {
    await c.get(`/dashboard/events/${eventId}`);
    const res = await c.post(`/dashboard/events/${eventId}/resend`, { to: 'one', endpoint_id: '' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('Choose the endpoint to send the event to.');
    expect(await deliveries(eventId)).toHaveLength(0);
  });

  it('when the event is another account’s, of the other mode, unknown or malformed, then pages and Resend answer 404 and nothing is sent', async () => {
    for (const id of [theirEventId, liveEventId, 'evt_00000000000000000000000000', 'nope', 'cus_00000000000000000000000000']) {
      expect((await c.get(`/dashboard/events/${id}`)).status).toBe(404);
      await c.get('/dashboard/events');
      const res = await c.post(`/dashboard/events/${id}/resend`, { to: 'all' });
      expect(res.status).toBe(404);
    }
    expect(await deliveries(theirEventId)).toHaveLength(0);
    expect(await deliveries(liveEventId)).toHaveLength(0);
    const list = await c.get('/dashboard/events');
    expect(listedIds(list.html)).toEqual([eventId]);
  });

  it('when there is no session, then the pages and Resend send to sign-in', async () => {
    const anon = new DashClient(t);
    for (const path of ['/dashboard/events', `/dashboard/events/${eventId}`]) {
      const res = await anon.get(path);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/sign-in');
    }
    const post = await anon.send('POST', `/dashboard/events/${eventId}/resend`, { to: 'all' });
    expect(post.status).toBe(303);
    expect(post.location).toBe('/dashboard/sign-in');
    expect(await deliveries(eventId)).toHaveLength(0);
  });

  it('when the CSRF token is wrong or missing, then 403 and nothing is sent', async () => {
    await c.get(`/dashboard/events/${eventId}`);
    expect((await c.post(`/dashboard/events/${eventId}/resend`, { to: 'all', _csrf: 'x'.repeat(43) })).status).toBe(403);
    const { token, mode } = c;
    const missing = await c.send('POST', `/dashboard/events/${eventId}/resend`, { to: 'all', form_mode: mode, idempotency_key: formKey() });
    expect(missing.status).toBe(403);
    expect(token).toBeTruthy();
    expect(await deliveries(eventId)).toHaveLength(0);
  });

  it('when a form opened in test mode is posted after switching to live, then 409 and nothing is sent', async () => {
    const other = await signedIn(t, a.accountId, 'events-acl-mode@example.com');
    await other.get(`/dashboard/events/${eventId}`);
    const token = other.token;
    await other.post('/dashboard/mode', { mode: 'live', back: '/dashboard/events' });
    const res = await other.send('POST', `/dashboard/events/${eventId}/resend`, { _csrf: token, form_mode: 'test', idempotency_key: formKey(), to: 'all' });
    expect(res.status).toBe(409);
    expect(res.html).toContain('Nothing was changed');
    expect(await deliveries(eventId)).toHaveLength(0);
    // In live mode the list shows the live event only.
    expect(listedIds((await other.get('/dashboard/events')).html)).toEqual([liveEventId]);
  });

  it('when the event is resent to the account’s own endpoint, then it works (the control of the cases above)', async () => {
    await c.get(`/dashboard/events/${eventId}`);
    const res = await resendTo(mine.id);
    expect(res.status).toBe(303);
    expect(await deliveries(eventId)).toEqual([expect.objectContaining({ endpoint_id: mine.id })]);
  });
});
