import { beforeAll, describe, expect, it } from 'vitest';
import { eventObjects, eventsFor } from '../helpers/events.ts';
import { watchJobs } from '../helpers/jobs.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { disputed, pay } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer({ workers: true, env: { RECONCILE_INTERVAL_MS: '1000' } });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const get = async (id: string, k = key) => t.request('GET', `/v1/disputes/${id}`, { key: k });
const patch = (id: string, body: unknown, k = key) => t.request('PATCH', `/v1/disputes/${id}`, { key: k, body });
const close = (id: string, k = key, body: unknown = {}) => t.request('POST', `/v1/disputes/${id}/close`, { key: k, body });
const statusOf = async (id: string) => (await get(id)).body.status as string;

describe('a dispute appears', () => {
  it('when a payment is made with card 0259, then a dispute NEEDS_RESPONSE appears with dispute.created, and the payment is disputed', async () => {
    const { paymentId, dispute } = await disputed(t, key, 4200);
    expect(dispute).toMatchObject({
      object: 'dispute',
      livemode: false,
      payment_id: paymentId,
      amount_cents: 4200,
      currency: 'usd',
      reason: 'fraudulent',
      status: 'NEEDS_RESPONSE',
    });
    expect(dispute.id).toMatch(/^dp_/);
    expect(dispute.evidence).toMatchObject({ product_description: null, customer_communication: null, uncategorized_text: null });
    expect(dispute.evidence_due_by - dispute.created).toBeGreaterThanOrEqual(7 * 86400 - 5);
    expect(dispute.evidence_due_by - dispute.created).toBeLessThanOrEqual(7 * 86400 + 5);
    expect((await get(dispute.id)).body).toEqual(dispute);

    const payment = (await t.request('GET', `/v1/payments/${paymentId}`, { key })).body;
    expect(payment).toMatchObject({ status: 'SUCCEEDED', disputed: true });
    const [row] = await t.sql`select disputed from payments where id = ${paymentId}`;
    expect(row!.disputed).toBe(true);
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created']);
    const [created] = await eventObjects(t, dispute.id);
    expect(created!.object).toEqual(dispute);
  });

  it('when a payment is made with an ordinary card, then no dispute appears and the payment is not disputed', async () => {
    const paymentId = await pay(t, key, CARDS.visa);
    const other = await disputed(t, key); // learnt by the same syncs, after the ordinary payment
    expect(other.paymentId).not.toBe(paymentId);
    const [row] = await t.sql`select count(*)::int as n from disputes where payment_id = ${paymentId}`;
    expect(row!.n).toBe(0);
    expect((await t.request('GET', `/v1/payments/${paymentId}`, { key })).body.disputed).toBe(false);
  });

  it('when the processor is asked again, then the dispute is recorded once', async () => {
    const { paymentId } = await disputed(t, key);
    const watch = await watchJobs(t.s.queues.get('disputes'), t.s.redis);
    try {
      await t.s.queues.get('disputes').add('sync', {}, { jobId: `again-${paymentId}` });
      expect((await watch.outcome(`again-${paymentId}`)).state).toBe('completed');
    } finally {
      await watch.close();
    }
    const [row] = await t.sql`select count(*)::int as n from disputes where payment_id = ${paymentId}`;
    expect(row!.n).toBe(1);
  });
});

describe('answering a dispute', () => {
  it('when evidence is sent, then it is merged (null clears a field) and each change records dispute.updated', async () => {
    const { dispute } = await disputed(t, key);
    const first = await patch(dispute.id, { evidence: { product_description: 'A blue mug', customer_name: 'Ada' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'NEEDS_RESPONSE', evidence: { product_description: 'A blue mug', customer_name: 'Ada', uncategorized_text: null } });
    const second = await patch(dispute.id, { evidence: { customer_name: null, customer_communication: 'Mail of 3 May' } });
    expect(second.body.evidence).toMatchObject({ product_description: 'A blue mug', customer_name: null, customer_communication: 'Mail of 3 May' });
    const same = await patch(dispute.id, { evidence: { product_description: 'A blue mug' } });
    expect(same.body).toEqual(second.body);
    const [row] = await t.sql`select evidence, status from disputes where id = ${dispute.id}`;
    expect(row).toEqual({ evidence: { product_description: 'A blue mug', customer_communication: 'Mail of 3 May' }, status: 'NEEDS_RESPONSE' });
    const events = await eventObjects(t, dispute.id);
    expect(events.map((e) => e.type)).toEqual(['dispute.created', 'dispute.updated', 'dispute.updated']);
    expect(events[2]!.object).toEqual(second.body);
  });

  it('when evidence with uncategorized_text winning_evidence is submitted, then UNDER_REVIEW, then WON with dispute.closed', async () => {
    const { dispute } = await disputed(t, key);
    const res = await patch(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' }, submit: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'UNDER_REVIEW', evidence: { uncategorized_text: 'winning_evidence' } });
    await eventually(async () => (await statusOf(dispute.id)) === 'WON');
    const events = await eventObjects(t, dispute.id);
    expect(events.map((e) => e.type)).toEqual(['dispute.created', 'dispute.updated', 'dispute.closed']);
    expect(events[1]!.object).toEqual(res.body);
    expect(events[2]!.object).toEqual((await get(dispute.id)).body);
    const [row] = await t.sql`select status, pending_action, submitted_at, closed_at from disputes where id = ${dispute.id}`;
    expect(row).toMatchObject({ status: 'WON', pending_action: null });
    expect(row!.submitted_at).toBeInstanceOf(Date);
    expect(row!.closed_at).toBeInstanceOf(Date);
    expect((await t.request('GET', `/v1/payments/${dispute.payment_id}`, { key })).body.disputed).toBe(true);
  });

  it('when evidence with losing_evidence is submitted, then the dispute is LOST with dispute.closed', async () => {
    const { dispute } = await disputed(t, key);
    await patch(dispute.id, { evidence: { uncategorized_text: 'losing_evidence' } });
    const res = await patch(dispute.id, { submit: true });
    expect(res.body.status).toBe('UNDER_REVIEW');
    await eventually(async () => (await statusOf(dispute.id)) === 'LOST');
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created', 'dispute.updated', 'dispute.updated', 'dispute.closed']);
  });

  it('when other evidence is submitted, then the dispute stays UNDER_REVIEW after the decision job has asked', async () => {
    const { dispute } = await disputed(t, key);
    const watch = await watchJobs(t.s.queues.get('disputes'), t.s.redis);
    try {
      expect((await patch(dispute.id, { evidence: { uncategorized_text: 'it was the customer' }, submit: true })).body.status).toBe('UNDER_REVIEW');
      expect(await watch.outcome(`decide-${dispute.id}`)).toEqual({ state: 'completed', returnvalue: { status: 'UNDER_REVIEW' } });
    } finally {
      await watch.close();
    }
    expect(await statusOf(dispute.id)).toBe('UNDER_REVIEW');
    const again = await patch(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'resource_invalid_state', param: 'evidence' });
  });

  it('when the dispute is closed, then LOST at once with dispute.closed, and it can no longer be changed', async () => {
    const { dispute } = await disputed(t, key);
    const res = await close(dispute.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: dispute.id, status: 'LOST' });
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created', 'dispute.closed']);
    const [closed] = (await eventObjects(t, dispute.id)).slice(1);
    expect(closed!.object).toEqual(res.body);
    const [row] = await t.sql`select status, pending_action from disputes where id = ${dispute.id}`;
    expect(row).toEqual({ status: 'LOST', pending_action: null });

    const again = await close(dispute.id);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_invalid_state', param: 'id' });
    const submit = await patch(dispute.id, { submit: true });
    expect(submit.body.error).toMatchObject({ code: 'resource_invalid_state', param: 'submit' });
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created', 'dispute.closed']);
  });
});

describe('listing disputes', () => {
  it('when disputes are listed, then newest first, filtered by payment_id and status, the filters combining with cursors', async () => {
    const k = (await t.account()).test;
    const made: Array<Awaited<ReturnType<typeof disputed>>> = [];
    for (let i = 0; i < 3; i++) made.push(await disputed(t, k));
    await close(made[1]!.dispute.id, k);
    const ids = made.map((m) => m.dispute.id).sort().reverse();

    const all = await t.request('GET', '/v1/disputes?limit=2', { key: k });
    expect(all.body).toMatchObject({ object: 'list', url: '/v1/disputes', has_more: true });
    expect(all.body.data.map((d: any) => d.id)).toEqual(ids.slice(0, 2));
    const next = await t.request('GET', `/v1/disputes?limit=2&starting_after=${ids[1]}`, { key: k });
    expect(next.body.data.map((d: any) => d.id)).toEqual([ids[2]]);
    expect(next.body.has_more).toBe(false);
    const back = await t.request('GET', `/v1/disputes?limit=1&ending_before=${ids[2]}`, { key: k });
    expect(back.body.data.map((d: any) => d.id)).toEqual([ids[1]]);

    const open = await t.request('GET', `/v1/disputes?status=NEEDS_RESPONSE&starting_after=${ids[0]}`, { key: k });
    expect(open.body.data.map((d: any) => d.status)).toEqual(open.body.data.map(() => 'NEEDS_RESPONSE'));
    expect(open.body.data.map((d: any) => d.id)).toEqual(ids.slice(1).filter((id) => id !== made[1]!.dispute.id));
    const lost = await t.request('GET', '/v1/disputes?status=LOST', { key: k });
    expect(lost.body.data.map((d: any) => d.id)).toEqual([made[1]!.dispute.id]);
    const one = await t.request('GET', `/v1/disputes?payment_id=${made[2]!.paymentId}`, { key: k });
    expect(one.body.data.map((d: any) => d.id)).toEqual([made[2]!.dispute.id]);
    const none = await t.request('GET', `/v1/disputes?payment_id=${made[2]!.paymentId}&starting_after=${made[2]!.dispute.id}`, { key: k });
    expect(none.body.data).toEqual([]);
  });
});

describe('errors', () => {
  let id: string;
  beforeAll(async () => {
    id = (await disputed(t, key)).dispute.id;
  });

  it.each([
    [{ evidence: { favourite_colour: 'blue' } }, 'parameter_unknown', 'evidence[favourite_colour]'],
    [{ amount: 5 }, 'parameter_unknown', 'amount'],
    [{ evidence: { product_description: 'x'.repeat(20_001) } }, 'parameter_invalid', 'evidence[product_description]'],
    [{ evidence: { customer_name: 'x'.repeat(501) } }, 'parameter_invalid', 'evidence[customer_name]'],
    [{ evidence: { product_description: 5 } }, 'parameter_invalid', 'evidence[product_description]'],
    [{ evidence: 'all of it' }, 'parameter_invalid', 'evidence'],
    [{ submit: 'yes' }, 'parameter_invalid', 'submit'],
  ])('when PATCH sends %j, then 400 %s naming %s, and nothing changes', async (body, code, param) => {
    const res = await patch(id, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    const [row] = await t.sql`select status, evidence from disputes where id = ${id}`;
    expect(row).toEqual({ status: 'NEEDS_RESPONSE', evidence: {} });
  });

  it('when close has a body field, then 400 parameter_unknown', async () => {
    const res = await close(id, key, { reason: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_unknown', param: 'reason' });
    expect(await statusOf(id)).toBe('NEEDS_RESPONSE');
  });

  it.each([
    ['status=OPEN', 'status'],
    ['limit=0', 'limit'],
    ['colour=blue', 'colour'],
    ['starting_after=pay_123', 'starting_after'],
  ])('when the list is asked with %s, then 400 naming %s', async (query, param) => {
    const res = await t.request('GET', `/v1/disputes?${query}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it('when an id is missing or malformed, then 404 resource_missing', async () => {
    for (const bad of ['dp_00000000000000000000000000000', 'nope', 'pay_x']) {
      for (const res of [await get(bad), await patch(bad, { submit: true }), await close(bad)]) {
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
      }
    }
  });
});

describe('isolation', () => {
  it("when another account or the other mode asks for a dispute, then 404 as for a missing one, and it is left unchanged", async () => {
    const { dispute } = await disputed(t, key);
    const other = await t.account();
    const [mine] = await t.sql<{ account_id: string }[]>`select account_id from disputes where id = ${dispute.id}`;
    const live = await t.key(mine!.account_id, 'live');
    for (const k of [other.test, other.live, live]) {
      for (const res of [await get(dispute.id, k), await patch(dispute.id, { evidence: { customer_name: 'Eve' }, submit: true }, k), await close(dispute.id, k)]) {
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
      }
      const list = await t.request('GET', `/v1/disputes?payment_id=${dispute.payment_id}`, { key: k });
      expect(list.body.data).toEqual([]);
    }
    expect((await get(dispute.id)).body).toEqual(dispute);
    expect(await eventsFor(t, dispute.id)).toEqual(['dispute.created']);
  });
});
