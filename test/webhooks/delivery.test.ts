import { afterEach, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { verifyWithStripe } from './receiver.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, deliveryRows, emit } from './helpers.ts';
import { useReceiver } from '../helpers/receiver.ts';

const t = useTestServer({
  workers: [webhookDeliveryWorker as never],
  env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '1000' },
});
const rx = useReceiver();
// A test that changes the receiver's answers gets them put back whatever its outcome.
afterEach(() => rx.setBehaviour(() => 200));

const forPath = (path: string) => (r: { path: string }) => r.path === path;

describe('fan-out and signing', () => {
  it('when an event is recorded, then each subscribed endpoint receives the complete event, signed so that a third-party verifier accepts it', async () => {
    const a = await t.account();
    const customer = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'x@example.com', first_name: 'Ada' } })).body;
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/signed`, enabled_events: ['payment.succeeded'] });

    const event = await emit(t, a.accountId, false, 'payment.succeeded', customer);
    const [req] = await rx.waitFor(1, 10_000, forPath('/signed'));

    const verified = verifyWithStripe(req!, ep.signing_secret);
    expect(verified.id).toBe(event.id);
    expect(() => verifyWithStripe(req!, 'whsec_wrong')).toThrow();
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['user-agent']).toBe('payments-service-webhooks/1.0'); // README: What a delivery looks like
    expect(req!.headers['service-event-id']).toBe(event.id);
    expect(req!.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    // The body is the event exactly as the events API shows it, data.object by the customer presenter.
    const api = await t.request('GET', `/v1/events/${event.id}`, { key: a.test });
    expect(JSON.parse(req!.body)).toEqual(api.body);
    // Byte for byte what the API serialises (the body is spliced from the stored text: presentEventJson).
    expect(req!.body).toBe(JSON.stringify(api.body));
    expect(api.body.data.object).toEqual(customer);
    expect(Object.keys(JSON.parse(req!.body).data.object)).toEqual(Object.keys(customer));

    await eventually(async () => (await deliveryRows(t, event.id))[0]?.status === 'SUCCEEDED');
    const list = await t.request('GET', `/v1/events/${event.id}/deliveries`, { key: a.test });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ object: 'webhook_delivery', endpoint_id: ep.id, status: 'SUCCEEDED', attempt_count: 1 });
    expect(list.body.data[0].attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, error: null, response_body: 'answer 200' }),
    ]);
  });

  it('when endpoints subscribe to different types and modes, then each gets only its own type in its own mode', async () => {
    const a = await t.account();
    const paid = await createEndpoint(t, a.test, { url: `${rx.url}/sub-paid`, enabled_events: ['payment.succeeded'] });
    const expired = await createEndpoint(t, a.test, { url: `${rx.url}/sub-expired`, enabled_events: ['checkout.session.expired', 'payment.failed'] });
    const all = await createEndpoint(t, a.test, { url: `${rx.url}/sub-all`, enabled_events: ['*'] });
    const live = await createEndpoint(t, a.live, { url: `${rx.url}/sub-live`, enabled_events: ['*'] });
    const other = await t.account();
    await createEndpoint(t, other.test, { url: `${rx.url}/sub-other`, enabled_events: ['*'] });

    const e1 = await emit(t, a.accountId, false, 'payment.succeeded');
    const e2 = await emit(t, a.accountId, false, 'checkout.session.expired');
    const e3 = await emit(t, a.accountId, true, 'payment.failed');

    expect((await deliveryRows(t, e1.id)).map((d) => d.endpoint_id).sort()).toEqual([paid.id, all.id].sort());
    expect((await deliveryRows(t, e2.id)).map((d) => d.endpoint_id).sort()).toEqual([expired.id, all.id].sort());
    expect((await deliveryRows(t, e3.id)).map((d) => d.endpoint_id)).toEqual([live.id]);

    await rx.waitFor(2, 10_000, forPath('/sub-all'));
    await rx.waitFor(1, 10_000, forPath('/sub-live'));
    await rx.waitFor(1, 10_000, forPath('/sub-paid'));
    await rx.waitFor(1, 10_000, forPath('/sub-expired'));
    await eventually(async () => (await t.sql`select 1 from webhook_deliveries where status = 'PENDING' and account_id = ${a.accountId}`).length === 0);
    const ids = (p: string) => rx.received.filter(forPath(p)).map((r) => JSON.parse(r.body).id);
    expect(ids('/sub-paid')).toEqual([e1.id]);
    expect(ids('/sub-expired')).toEqual([e2.id]);
    expect(ids('/sub-all').sort()).toEqual([e1.id, e2.id].sort());
    expect(ids('/sub-live')).toEqual([e3.id]);
    expect(JSON.parse(rx.received.find(forPath('/sub-live'))!.body).livemode).toBe(true);
    expect(ids('/sub-other')).toEqual([]);
  });

  it('when the receiver answers a redirect or takes longer than the timeout, then the attempt fails and is logged', async () => {
    const a = await t.account();
    rx.setBehaviour((_n, r) => (r.path === '/redirect' ? 302 : r.path === '/slow' ? 'hang' : r.path === '/big' ? { status: 200, body: 'x'.repeat(5000) } : 200));
    const redirect = await createEndpoint(t, a.test, { url: `${rx.url}/redirect` });
    const slow = await createEndpoint(t, a.test, { url: `${rx.url}/slow` });
    await createEndpoint(t, a.test, { url: `${rx.url}/big` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');

    const rows = await eventually(async () => {
      const r = await deliveryRows(t, event.id);
      return r.length === 3 && r.every((d) => d.attempt_count === 1) && r;
    });
    const byEndpoint = new Map(rows.map((r) => [r.endpoint_id, r]));
    expect(byEndpoint.get(redirect.id)!.status).toBe('PENDING'); // retried later (10 min with the default base)
    expect(byEndpoint.get(slow.id)!.status).toBe('PENDING');
    const attempts = await t.sql<{ endpoint_id: string; status_code: number | null; error: string | null; response_body: string | null; duration_ms: number }[]>`
      select d.endpoint_id, a.status_code, a.error, a.response_body, a.duration_ms
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.event_id = ${event.id}`;
    const at = (id: string) => attempts.find((x) => x.endpoint_id === id)!;
    expect(at(redirect.id)).toMatchObject({ status_code: 302, error: expect.stringContaining('HTTP 302') });
    expect(at(slow.id)).toMatchObject({ status_code: null, error: expect.stringMatching(/timeout/i) });
    expect(at(slow.id).duration_ms).toBeGreaterThanOrEqual(1000);
    const big = attempts.find((x) => x.endpoint_id !== redirect.id && x.endpoint_id !== slow.id)!;
    expect(big.status_code).toBe(200);
    expect(big.response_body).toBe('x'.repeat(1024)); // README: the first 1 KB of your answer
  });
});

describe('pause, resume, delete', () => {
  it('when an endpoint is disabled, then its deliveries wait PAUSED, and when it is re-enabled they are sent', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/paused` });
    const control = await createEndpoint(t, a.test, { url: `${rx.url}/paused-control` });
    const off = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    expect(off.body.is_active).toBe(false);

    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const statusOf = async (id: string) => (await deliveryRows(t, event.id)).find((d) => d.endpoint_id === id)?.status;
    expect(await statusOf(ep.id)).toBe('PAUSED');
    // The active endpoint's delivery of the same event has been sent: had the paused one a job, it would have run too.
    await eventually(async () => (await statusOf(control.id)) === 'SUCCEEDED');
    expect(rx.received.filter(forPath('/paused'))).toHaveLength(0);
    expect(await statusOf(ep.id)).toBe('PAUSED');

    const on = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: true } });
    expect(on.body.is_active).toBe(true);
    const [req] = await rx.waitFor(1, 10_000, forPath('/paused'));
    expect(JSON.parse(req!.body).id).toBe(event.id);
    await eventually(async () => (await statusOf(ep.id)) === 'SUCCEEDED');
  });

  it('when an endpoint with a delivery waiting for its retry is disabled and re-enabled, then the retry is sent at once and earlier attempts still count', async () => {
    const a = await t.account();
    let fail = true;
    rx.setBehaviour((_n, r) => (r.path === '/flaky' && fail ? 503 : 200));
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/flaky` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    await eventually(async () => (await deliveryRows(t, event.id))[0]?.attempt_count === 1);

    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    expect((await deliveryRows(t, event.id))[0]!.status).toBe('PAUSED');
    fail = false;
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: true } });
    const rows = await eventually(async () => {
      const r = await deliveryRows(t, event.id);
      return r[0]?.status === 'SUCCEEDED' && r;
    }, 10_000);
    expect(rows[0]!.attempt_count).toBe(2);
  });

  it('when an endpoint is deleted, then its pending deliveries are CANCELLED and never sent', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/deleted` });
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    const del = await t.request('DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: a.test });
    expect(del.body).toEqual({ id: ep.id, object: 'webhook_endpoint', deleted: true });
    expect((await deliveryRows(t, event.id)).map((d) => d.status)).toEqual(['CANCELLED']);
    const list = await t.request('GET', `/v1/events/${event.id}/deliveries`, { key: a.test });
    expect(list.body.data.map((d: { status: string }) => d.status)).toEqual(['CANCELLED']);
    // A later event to an active endpoint has been sent: a job of the cancelled delivery would have run by then.
    const control = await createEndpoint(t, a.test, { url: `${rx.url}/deleted-control` });
    await emit(t, a.accountId, false, 'payment.succeeded');
    await rx.waitFor(1, 10_000, forPath('/deleted-control'));
    await eventually(async () => (await t.sql`select 1 from webhook_deliveries where endpoint_id = ${control.id} and status = 'SUCCEEDED'`).length === 1);
    expect(rx.received.filter(forPath('/deleted'))).toHaveLength(0);
    expect((await deliveryRows(t, event.id)).map((d) => d.status)).toEqual(['CANCELLED']);
  });
});

describe('resend and rotation', () => {
  it('when an event is resent, then new deliveries with new ids go out at once, to one endpoint when endpoint_id is given', async () => {
    const a = await t.account();
    const one = await createEndpoint(t, a.test, { url: `${rx.url}/resend-1` });
    const two = await createEndpoint(t, a.test, { url: `${rx.url}/resend-2` });
    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    await rx.waitFor(1, 10_000, forPath('/resend-1'));
    await rx.waitFor(1, 10_000, forPath('/resend-2'));
    const first = await deliveryRows(t, event.id);

    const all = await t.request('POST', `/v1/events/${event.id}/resend`, { key: a.test });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    const only = await t.request('POST', `/v1/events/${event.id}/resend`, { key: a.test, body: { endpoint_id: two.id } });
    expect(only.body.data).toEqual([expect.objectContaining({ endpoint_id: two.id, status: 'PENDING', attempt_count: 0 })]);

    await rx.waitFor(2, 10_000, forPath('/resend-1'));
    await rx.waitFor(3, 10_000, forPath('/resend-2'));
    const rows = await deliveryRows(t, event.id);
    expect(rows).toHaveLength(5);
    expect(new Set(rows.map((r) => r.id)).size).toBe(5);
    expect(rows.map((r) => r.id)).toEqual(expect.arrayContaining(first.map((r) => r.id)));
    const ids = rx.received.filter((r) => r.path.startsWith('/resend-')).map((r) => JSON.parse(r.body).id);
    expect(new Set(ids)).toEqual(new Set([event.id])); // the same event id: receivers drop duplicates by it
    expect(rows.filter((r) => r.endpoint_id === one.id)).toHaveLength(2);
    expect(rows.filter((r) => r.endpoint_id === two.id)).toHaveLength(3);

    const missing = await t.request('POST', `/v1/events/${event.id}/resend`, { key: a.live, body: { endpoint_id: two.id } });
    expect(missing.status).toBe(404);
  });

  it('when the secret is rotated, then the header carries two v1 signatures, new first, each verifying with its own secret', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/rotated` });
    const rot = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: a.test });
    expect(rot.status).toBe(200);
    expect(rot.body.signing_secret).toMatch(/^whsec_/);
    expect(rot.body.signing_secret).not.toBe(ep.signing_secret);

    await emit(t, a.accountId, false, 'payment.succeeded');
    const [req] = await rx.waitFor(1, 10_000, forPath('/rotated'));
    expect(req!.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(() => verifyWithStripe(req!, rot.body.signing_secret)).not.toThrow();
    expect(() => verifyWithStripe(req!, ep.signing_secret)).not.toThrow();

    // Once the 24 hours are over, only the new secret signs.
    await t.sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${ep.id}`;
    await emit(t, a.accountId, false, 'payment.succeeded');
    const [, later] = await rx.waitFor(2, 10_000, forPath('/rotated'));
    expect(later!.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => verifyWithStripe(later!, rot.body.signing_secret)).not.toThrow();
    expect(() => verifyWithStripe(later!, ep.signing_secret)).toThrow();
  });
});
