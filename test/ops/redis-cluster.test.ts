import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError } from '../../src/lib/dependencies.ts';
import { QUEUE_NAMES } from '../../src/queue/queues.ts';
import { connectRedis } from '../../src/queue/redis.ts';
import { Payer } from '../helpers/payer.ts';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.ts';
import { useTestServer } from '../helpers/server.ts';
import { freePort } from '../helpers/process.ts';
import { eventually, sleep } from '../helpers/wait.ts';
import { createEndpoint, createSession } from '../helpers/factories.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { CARDS } from '../helpers/cards.ts';

// Issue 23, point 3: the service (web and every worker, with its schedules) on a Redis Cluster of 3
// masters and 3 replicas that this file starts on free loopback ports, and kills a master of under
// load. Nothing here calls a repair function: the running service's own passes repair.

let cluster: RedisCluster;
let receiver: Receiver;
/** Requests per event id: each event's first delivery attempt is refused, the next accepted. */
const seen = new Map<string, number>();
const eventId = (body: string) => (JSON.parse(body) as { id: string }).id;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  receiver = await startReceiver((_n, r) => {
    const id = eventId(r.body);
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? 500 : 200;
  });
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await cluster?.stop();
});
const t = useTestServer(() => ({
  workers: true,
  env: {
    REDIS_URL: '',
    REDIS_CLUSTER_NODES: cluster.nodesSetting,
    RECONCILE_INTERVAL_MS: '1000',
    // A job whose completion the dead master took with it is still "active" on its replica: the stall
    // check hands it out again once its lock lapses.
    WORKER_LOCK_MS: '2000',
    WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
    WEBHOOK_BACKOFF_BASE_MS: '300',
    CHECKOUT_MIN_EXPIRY_SECONDS: '1',
    ADMIN_USER: 'ops',
    ADMIN_PASSWORD: 'board-secret',
  },
}));

const basic = `Basic ${Buffer.from('ops:board-secret').toString('base64')}`;

describe('Redis Cluster', () => {
  it('when the service runs on a Redis Cluster, then each queue has a hash tag of its own, the queues spread over the masters, and the rate limits and Bull Board work there', async () => {
    const masters = new Set<number>();
    for (const name of Object.values(QUEUE_NAMES)) {
      const q = t.s.queues.get(name);
      expect(q.opts.prefix).toBe(`${t.s.config.redisPrefix}:{${name}}`);
      // Every key of the queue hashes to the slot of its tag.
      const slot = await cluster.keySlot(`{${name}}`);
      for (const key of [q.keys.wait!, q.keys.delayed!, q.keys.meta!, q.keys.events!, `${q.keys['']!}some-job-id`]) expect(await cluster.keySlot(key)).toBe(slot);
      masters.add(await cluster.masterOf(slot));
    }
    expect(masters.size).toBe(3);

    // A hosted-page payment counts against the per-session limit, in the cluster.
    const { test: key } = await t.account();
    const cs = await createSession(t, key);
    const paid = await new Payer(t).pay(cs.id);
    expect(paid.status).toBe(303);
    expect(await t.s.redis.get(`${t.s.config.redisPrefix}:ratelimit:pay-session:${cs.id}`)).toBe('1');

    const board = await t.request('GET', '/admin/queues/api/queues', { headers: { authorization: basic } });
    expect(board.status).toBe(200);
    expect((board.body as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort()).toEqual(Object.values(QUEUE_NAMES).sort());
  });

  it('when the master holding the delivery and expiry queues is killed under load and its replica takes over, then every payment, expiry and event is done once: nothing lost, nothing twice', async () => {
    const { accountId, test: key } = await t.account();
    await createEndpoint(t, key, { url: `${receiver.url}/hook` });
    const slot = await cluster.keySlot(`{${QUEUE_NAMES.webhookDelivery}}`);
    const victim = await cluster.masterOf(slot);
    // The expiry queue lives on the same master (tags hash the same way in every cluster of 3 masters).
    expect(await cluster.masterOf(await cluster.keySlot(`{${QUEUE_NAMES.sessionExpiry}}`))).toBe(victim);

    const answers: Array<{ what: string; status: number }> = [];
    const toPay: string[] = [];
    const toExpire: string[] = [];
    let loading = true;
    const client = async (n: number) => {
      for (let i = 0; loading; i++) {
        // A session left to expire on its own (its delayed job), 2 s after creation.
        const left = await t.request('POST', '/v1/checkout/sessions', {
          key,
          body: { amount: 500 + i, currency: 'usd', success_url: 'https://example.com/ok', expires_at: Math.floor(Date.now() / 1000) + 2 },
        });
        answers.push({ what: 'create', status: left.status });
        if (left.status === 200) toExpire.push(left.body.id);
        // A session paid: on the hosted page, or through the test helper.
        const cs = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 1000 + i, currency: 'usd', success_url: 'https://example.com/ok' } });
        answers.push({ what: 'create', status: cs.status });
        if (cs.status !== 200) continue;
        toPay.push(cs.body.id);
        if ((n + i) % 2 === 0) {
          const page = await new Payer(t).pay(cs.body.id);
          answers.push({ what: 'page pay', status: page.status });
        } else {
          const r = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key, body: { card: CARDS.visa } });
          answers.push({ what: 'helper pay', status: r.status });
        }
      }
    };
    const load = Array.from({ length: 4 }, (_, n) => client(n));
    // The fault drill's timeline: load, the kill in the middle of it, load through the failover.
    await sleep(1500); // load running before the kill
    const killedAt = Date.now();
    await cluster.kill(victim);
    const top = await cluster.waitFailover(victim);
    const failoverMs = Date.now() - killedAt;
    expect(await cluster.masterOf(slot)).not.toBe(victim);
    expect(top.find((n) => n.port === victim)!.flags).toContain('fail');
    await sleep(1500); // load after the failover
    loading = false;
    await Promise.all(load);

    // Every call was answered as usual: the API never waits on Redis.
    expect(answers.filter((a) => !(a.status === 200 || (a.what === 'page pay' && a.status === 303)))).toEqual([]);
    expect(toPay.length).toBeGreaterThan(10);
    expect(toExpire.length).toBeGreaterThan(10);

    // Every session ends as it should: the paid ones COMPLETE, the others EXPIRED by their job or the repair pass.
    const statuses = async (ids: string[]) => t.sql<{ id: string; status: string }[]>`select id, status from checkout_sessions where id = any(${ids}::text[])`;
    await eventually(async () => (await statuses(toExpire)).every((r) => r.status === 'EXPIRED'), 30_000, 200);
    expect((await statuses(toPay)).filter((r) => r.status !== 'COMPLETE')).toEqual([]);

    // One charge per paid session, none for the expired ones.
    const charges = await t.sql<{ checkout_session_id: string; status: string; n: number }[]>`
      select checkout_session_id, status, count(*)::int as n from payments where account_id = ${accountId} group by 1, 2`;
    expect(charges.filter((c) => c.status !== 'SUCCEEDED' || c.n !== 1)).toEqual([]);
    expect(charges.map((c) => c.checkout_session_id).sort()).toEqual([...toPay].sort());

    // One completed or expired event per session.
    const events = await t.sql<{ id: string; type: string; session: string }[]>`
      select id, type, data->'object'->>'id' as session from events where account_id = ${accountId} and type like 'checkout.session.%'`;
    const bySession = new Map<string, string[]>();
    for (const e of events) bySession.set(e.session, [...(bySession.get(e.session) ?? []), e.type]);
    for (const id of toPay) expect(bySession.get(id)).toEqual(['checkout.session.completed']);
    for (const id of toExpire) expect(bySession.get(id)).toEqual(['checkout.session.expired']);

    // Every event of the account reached the receiver, refused once then accepted once: never accepted twice.
    const all = (await t.sql<{ id: string }[]>`select id from events where account_id = ${accountId}`).map((e) => e.id);
    await eventually(
      async () => {
        const rows = await t.sql<{ status: string }[]>`select d.status from webhook_deliveries d join events e on e.id = d.event_id where e.account_id = ${accountId}`;
        return rows.length === all.length && rows.every((r) => r.status === 'SUCCEEDED');
      },
      30_000,
      200,
    );
    const received = receiver.received.filter((r) => all.includes(eventId(r.body)));
    const requests = new Map<string, number>(all.map((id) => [id, 0]));
    for (const r of received) requests.set(eventId(r.body), requests.get(eventId(r.body))! + 1);
    expect([...requests.entries()].filter(([, n]) => n !== 2)).toEqual([]);
    // What the receiver saw is what Postgres recorded: two attempts per delivery, the second a 2xx.
    const attempts = await t.sql<{ n: number; ok: number }[]>`
      select count(*)::int as n, count(*) filter (where a.status_code between 200 and 299)::int as ok
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id join events e on e.id = d.event_id where e.account_id = ${accountId}`;
    expect(attempts[0]).toEqual({ n: received.length, ok: all.length });

    // And the workers still stop: before ready checks were turned off, a worker whose blocking
    // connection dropped in the failover waited for ever, taking no job and never closing.
    await t.workers!.close();

    console.log(
      `redis cluster drill: ${answers.length} calls, ${toPay.length} sessions paid, ${toExpire.length} expired, ${all.length} events delivered; failover seen healthy ${failoverMs} ms after the kill`,
    );
  }, 110_000);

  it('when no node of REDIS_CLUSTER_NODES answers, then start-up fails at once with one line naming the nodes and no password', async () => {
    const ports = [await freePort(), await freePort()];
    const err = await connectRedis('', { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), password: 'hunter2', tls: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toBe(
      `the Redis Cluster is not reachable at 127.0.0.1:${ports[0]}, 127.0.0.1:${ports[1]} (None of startup nodes is available): check that its nodes are up and that REDIS_CLUSTER_NODES names some of them.`,
    );
  });
});
