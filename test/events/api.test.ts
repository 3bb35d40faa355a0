import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { emit } from '../helpers/events.ts';
import { createEndpoint } from '../helpers/factories.ts';

// No workers: deliveries stay as fan-out wrote them.
const t = useTestServer();

describe('events API', () => {
  it('when events are listed, then they come newest first, page by cursor, and filter by type and created range', async () => {
    const a = await t.account();
    const e1 = await emit(t, a.accountId, false, 'payment.succeeded');
    const e2 = await emit(t, a.accountId, false, 'payment.failed');
    const e3 = await emit(t, a.accountId, false, 'payment.succeeded');
    await emit(t, a.accountId, true, 'payment.succeeded');
    // Spread the creation times so that the range filter has something to cut.
    await t.sql`update events set created_at = to_timestamp(1700000000) where id = ${e1.id}`;
    await t.sql`update events set created_at = to_timestamp(1700000100) where id = ${e2.id}`;
    await t.sql`update events set created_at = to_timestamp(1700000200) where id = ${e3.id}`;

    const all = await t.request('GET', '/v1/events', { key: a.test });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', url: '/v1/events', has_more: false });
    expect(all.body.data.map((e: { id: string }) => e.id)).toEqual([e3.id, e2.id, e1.id]);
    expect(all.body.data[0]).toMatchObject({ object: 'event', livemode: false, type: 'payment.succeeded', api_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), created: 1700000200 });

    const page1 = await t.request('GET', '/v1/events?limit=2', { key: a.test });
    expect(page1.body.has_more).toBe(true);
    const page2 = await t.request('GET', `/v1/events?limit=2&starting_after=${page1.body.data[1].id}`, { key: a.test });
    expect(page2.body.data.map((e: { id: string }) => e.id)).toEqual([e1.id]);
    expect(page2.body.has_more).toBe(false);

    const byType = await t.request('GET', '/v1/events?type=payment.succeeded', { key: a.test });
    expect(byType.body.data.map((e: { id: string }) => e.id)).toEqual([e3.id, e1.id]);
    const range = await t.request('GET', '/v1/events?created[gte]=1700000050&created[lte]=1700000200', { key: a.test });
    expect(range.body.data.map((e: { id: string }) => e.id)).toEqual([e3.id, e2.id]);
    const encoded = await t.request('GET', '/v1/events?created%5Blte%5D=1700000100&type=payment.succeeded', { key: a.test });
    expect(encoded.body.data.map((e: { id: string }) => e.id)).toEqual([e1.id]);
    const cursorInFilter = await t.request('GET', `/v1/events?type=payment.succeeded&limit=1&starting_after=${e3.id}`, { key: a.test });
    expect(cursorInFilter.body.data.map((e: { id: string }) => e.id)).toEqual([e1.id]);
  });

  it.each([
    ['type=payment.exploded', 'type'],
    ['created[gte]=yesterday', 'created[gte]'],
    ['created[gt]=1', 'created[gt]'],
    ['limit=101', 'limit'],
  ])('when the list query has %s, then it answers 400 naming %s', async (query, param) => {
    const a = await t.account();
    const res = await t.request('GET', `/v1/events?${query}`, { key: a.test });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it('when an event is read with the other mode or another account, then it answers 404', async () => {
    const a = await t.account();
    const b = await t.account();
    const e = await emit(t, a.accountId, false, 'payment.succeeded');
    expect((await t.request('GET', `/v1/events/${e.id}`, { key: a.test })).status).toBe(200);
    for (const key of [a.live, b.test]) {
      for (const path of [`/v1/events/${e.id}`, `/v1/events/${e.id}/deliveries`]) {
        const res = await t.request('GET', path, { key });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('resource_missing');
      }
      expect((await t.request('POST', `/v1/events/${e.id}/resend`, { key })).status).toBe(404);
      expect((await t.request('GET', '/v1/events', { key })).body.data).toEqual([]);
    }
    expect((await t.request('GET', '/v1/events/evt_nope', { key: a.test })).status).toBe(404);
  });

  it('when an event is recorded, then its deliveries are listed with their state, one per subscribed endpoint', async () => {
    const a = await t.account();
    const on = await createEndpoint(t, a.test, { url: 'https://a.example.com/h' });
    const off = await createEndpoint(t, a.test, { url: 'https://b.example.com/h' });
    await t.request('PATCH', `/v1/webhook-endpoints/${off.id}`, { key: a.test, body: { is_active: false } });
    const e = await emit(t, a.accountId, false, 'invoice.paid');
    const res = await t.request('GET', `/v1/events/${e.id}/deliveries`, { key: a.test });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    const by = new Map(res.body.data.map((d: { endpoint_id: string }) => [d.endpoint_id, d]));
    expect(by.get(on.id)).toMatchObject({ object: 'webhook_delivery', event_id: e.id, status: 'PENDING', attempt_count: 0, attempts: [] });
    expect(by.get(off.id)).toMatchObject({ status: 'PAUSED', next_attempt_at: null });
    const resend = await t.request('POST', `/v1/events/${e.id}/resend`, { key: a.test, body: { endpoint_id: 'we_bad', extra: 1 } });
    expect(resend.body.error).toMatchObject({ code: 'parameter_unknown', param: 'extra' });
  });

  it('when the recording transaction rolls back, then neither the event nor its deliveries exist', async () => {
    const a = await t.account();
    await createEndpoint(t, a.test, { url: 'https://a.example.com/h' });
    const { withTx } = await import('../../src/db/tx.ts');
    const { recordEvent } = await import('../../src/webhooks/outbox.ts');
    let id = '';
    await expect(
      withTx(t.s, t.s.log, async (tx) => {
        id = (await recordEvent(tx, t.s, a.accountId, 'payment.failed', { id: 'cus_x', object: 'customer', livemode: false })).id;
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    expect(await t.sql`select 1 from events where id = ${id}`).toHaveLength(0);
    expect(await t.sql`select 1 from webhook_deliveries where event_id = ${id}`).toHaveLength(0);
  });
});
