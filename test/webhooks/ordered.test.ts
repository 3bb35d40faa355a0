import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import type { ApiObject } from '../../src/events/presenter.ts';
import { reconcileDeliveries } from '../../src/webhooks/deliver.ts';
import { recordEvents } from '../../src/webhooks/outbox.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { startReceiver, type Received } from '../helpers/receiver.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint } from './helpers.ts';

// Issue 26, point 6: an ordered endpoint gets the deliveries about one object in event order, each
// after the one before succeeded or failed for good, while other objects flow in parallel.

const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: '300' } });

const objectOf = (r: Received): string => JSON.parse(r.body).data.object.id;
const eventOf = (r: Received): string => JSON.parse(r.body).id;
const customer = (id: string) => ({ id, object: 'customer', livemode: false }) as ApiObject;

/** Events about `objects`, `perObject` each, interleaved (a0 b0 c0 a1 b1 c1 …), in one transaction: ids in that order. */
async function emitInterleaved(accountId: string, objects: string[], perObject: number): Promise<Map<string, string[]>> {
  const inputs = Array.from({ length: perObject }, () => objects).flat().map((id) => ({ accountId, type: 'payment.succeeded' as const, object: customer(id) }));
  const events = await withTx(t.s, t.s.log, (tx) => recordEvents(tx, t.s, inputs));
  const byObject = new Map<string, string[]>(objects.map((o) => [o, []]));
  events.forEach((e, i) => byObject.get(inputs[i]!.object.id)!.push(e.id));
  return byObject;
}

const statuses = (endpointId: string) =>
  t.sql<{ event_id: string; object_id: string; status: string; attempt_count: number }[]>`
    select event_id, object_id, status, attempt_count from webhook_deliveries where endpoint_id = ${endpointId} order by event_id`;

describe('ordered endpoints', () => {
  it('when the receiver fails every third request, then each object still gets its events in order, each after the one before succeeded', async () => {
    const rx = await startReceiver((n) => (n % 3 === 2 ? 500 : 200));
    try {
      const a = await t.account();
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/ordered`, ordered: true });
      expect(ep).toMatchObject({ ordered: true, rate_limit: null });
      const objects = ['cus_a0000000000000000000000000', 'cus_b0000000000000000000000000', 'cus_c0000000000000000000000000', 'cus_d0000000000000000000000000'];
      const expected = await emitInterleaved(a.accountId, objects, 4);

      await eventually(async () => (await statuses(ep.id)).every((d) => d.status === 'SUCCEEDED'), 20_000);
      const rows = await statuses(ep.id);
      expect(rows).toHaveLength(16);
      expect(rows.every((d) => objects.includes(d.object_id))).toBe(true);
      expect(rows.some((d) => d.attempt_count > 1)).toBe(true); // some did fail on the way

      for (const object of objects) {
        const arrivals = rx.received.filter((r) => objectOf(r) === object);
        // Attempts of one event are together and in event order: no event is sent before the one before it succeeded.
        const order = arrivals.map((r) => expected.get(object)!.indexOf(eventOf(r)));
        expect(order).toEqual([...order].sort((x, y) => x - y));
        const succeeded = arrivals.filter((r) => rx.received.indexOf(r) % 3 !== 2).map(eventOf);
        expect(succeeded).toEqual(expected.get(object));
      }
      // In parallel: the objects' first events all went out before any object's last one.
      const firstOfEach = objects.map((o) => rx.received.findIndex((r) => objectOf(r) === o));
      const lastOfAny = Math.min(...objects.map((o) => rx.received.findIndex((r) => eventOf(r) === expected.get(o)![3])));
      expect(Math.max(...firstOfEach)).toBeLessThan(lastOfAny);
    } finally {
      await rx.close();
    }
  });

  it('when one object fails, then only its later events wait, until it succeeds or fails for good', async () => {
    const poisoned = 'cus_p0000000000000000000000000';
    let healthy = false;
    const rx = await startReceiver((_n, r) => (objectOf(r) === poisoned && !healthy ? 500 : 200));
    try {
      const a = await t.account();
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/poison`, ordered: true });
      const other = 'cus_o0000000000000000000000000';
      const expected = await emitInterleaved(a.accountId, [poisoned, other], 3);
      const [p0, p1, p2] = expected.get(poisoned)!;

      // The other object is not held up; the poisoned object's second event is parked behind its first.
      await rx.waitFor(3, 10_000, (r) => objectOf(r) === other);
      await rx.waitFor(2, 10_000, (r) => objectOf(r) === poisoned);
      // Only its first event, tried again (two or more attempts by now), never the parked ones.
      expect(new Set(rx.received.filter((r) => objectOf(r) === poisoned).map(eventOf))).toEqual(new Set([p0]));
      const [parked] = await t.sql<{ status: string; next_attempt_at: Date | null }[]>`
        select status, next_attempt_at from webhook_deliveries where endpoint_id = ${ep.id} and event_id = ${p1!}`;
      expect(parked).toEqual({ status: 'PENDING', next_attempt_at: null });

      // Its first delivery uses its last attempt and fails for good: the second goes, and succeeds.
      await t.sql`update webhook_deliveries set attempt_count = 6 where endpoint_id = ${ep.id} and event_id = ${p0!} and status = 'PENDING'`;
      // Its next attempt now, not at the backoff it had already (300 ms doubling: on a loaded run
      // it had made more attempts by here, and the next was tens of seconds away). Promoted at each
      // look: an attempt in flight at the first promotion schedules its retry after it.
      await eventually(async () => {
        await t.s.queues.get('webhook-delivery').promoteJobs();
        // An attempt in flight at the update above finds attempt_count moved, records nothing (another
        // run's attempt, as far as it knows) and schedules no retry: the reconcile pass sends the
        // delivery again, as it would in production within RECONCILE_INTERVAL_MS.
        await reconcileDeliveries(t.s);
        return (await statuses(ep.id)).find((d) => d.event_id === p0)?.status === 'FAILED';
      }, 30_000);
      healthy = true;
      await eventually(async () => (await statuses(ep.id)).every((d) => d.event_id === p0 || d.status === 'SUCCEEDED'), 10_000);
      const after = rx.received.filter((r) => objectOf(r) === poisoned).map(eventOf);
      // p1, then p2 only once p1 succeeded (p1 may have been tried once more: released before the
      // receiver turned healthy, it got a 500 and its retry).
      const tail = after.slice(after.lastIndexOf(p0!) + 1);
      expect([...new Set(tail)]).toEqual([p1, p2]);
      expect(tail.lastIndexOf(p1!)).toBeLessThan(tail.indexOf(p2!));
    } finally {
      await rx.close();
    }
  }, 60_000);

  it('when a wake is lost (the worker died after recording, or Redis was flushed), then the reconcile pass sends the next delivery', async () => {
    const rx = await startReceiver(() => 200);
    try {
      const a = await t.account();
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/lost`, ordered: true });
      // Paused while the scene is set: nothing is sent.
      await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
      const expected = await emitInterleaved(a.accountId, ['cus_l0000000000000000000000000'], 3);
      const [e0, e1, e2] = expected.get('cus_l0000000000000000000000000')!;
      // The first was delivered, the second parked, and the wake of the second never happened.
      await t.sql`update webhook_endpoints set is_active = true where id = ${ep.id}`;
      await t.sql`update webhook_deliveries set status = 'SUCCEEDED', next_attempt_at = null, attempt_count = 1 where event_id = ${e0!} and endpoint_id = ${ep.id}`;
      await t.sql`update webhook_deliveries set status = 'PENDING', next_attempt_at = null where event_id in ${t.sql([e1!, e2!])} and endpoint_id = ${ep.id}`;

      const repaired = (await reconcileWorker.process({} as Job, t.s)) as Record<string, number>;
      expect(repaired['webhook-deliveries']).toBe(1); // only the second: the third is still behind it
      await eventually(async () => (await statuses(ep.id)).every((d) => d.status === 'SUCCEEDED'), 10_000);
      expect(rx.received.map(eventOf)).toEqual([e1, e2]);
    } finally {
      await rx.close();
    }
  });

  it('when an endpoint stops being ordered, then its parked deliveries go at once', async () => {
    const rx = await startReceiver(() => 200);
    try {
      const a = await t.account();
      const ep = await createEndpoint(t, a.test, { url: `${rx.url}/unorder`, ordered: true });
      await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
      const expected = await emitInterleaved(a.accountId, ['cus_u0000000000000000000000000'], 2);
      const [e0, e1] = expected.get('cus_u0000000000000000000000000')!;
      // The first is PAUSED (as if its endpoint's resume had not reached it yet), the second parked behind it.
      await t.sql`update webhook_endpoints set is_active = true where id = ${ep.id}`;
      await t.sql`update webhook_deliveries set status = 'PENDING', next_attempt_at = null where event_id = ${e1!} and endpoint_id = ${ep.id}`;
      const res = await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { ordered: false } });
      expect(res.body.ordered).toBe(false);
      await rx.waitFor(1, 10_000);
      expect(rx.received.map(eventOf)).toEqual([e1]);
      await eventually(async () => (await statuses(ep.id))[1]?.status === 'SUCCEEDED', 5000);
      expect((await statuses(ep.id)).map((d) => [d.event_id, d.status, d.object_id])).toEqual([
        [e0, 'PAUSED', null],
        [e1, 'SUCCEEDED', null],
      ]);
    } finally {
      await rx.close();
    }
  });
});
