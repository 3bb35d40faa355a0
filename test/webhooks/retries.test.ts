import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { QUEUE_NAMES } from '../../src/queue/queues.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, deliveryRows, emit } from './helpers.ts';
import { useReceiver } from '../helpers/receiver.ts';

const BASE = 150;
const t = useTestServer({
  workers: [webhookDeliveryWorker as never],
  env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: String(BASE), ADMIN_USER: 'ops', ADMIN_PASSWORD: 'board-secret' },
});
const rx = useReceiver((_n, r) => (r.path.startsWith('/down') && !healed.has(r.path) ? 500 : 200));
// Paths under /down answer 500 until a test heals them: no answer is shared between tests.
const healed = new Set<string>();

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

/** An endpoint at `path` that keeps failing, and an event to it: answers once its delivery is FAILED. */
async function failedDelivery(path: string) {
  const a = await t.account();
  await createEndpoint(t, a.test, { url: `${rx.url}${path}` });
  const event = await emit(t, a.accountId, false, 'payment.failed');
  // 7 attempts, 150 ms × (1 + 2 + … + 32) ≈ 9.5 s of backoff; the bound leaves room for a loaded machine.
  const [row] = await eventually(async () => {
    const r = await deliveryRows(t, event.id);
    return r[0]?.status === 'FAILED' && r;
  }, 40_000);
  return { a, event, row: row! };
}

describe('retries', () => {
  // The Bull Board test needs a failed delivery of its own: started with the file, so that the two
  // ten-second waits overlap, and still independent of the other test.
  let forRetry: Promise<Awaited<ReturnType<typeof failedDelivery>>>;
  beforeAll(() => {
    forRetry = failedDelivery('/down-board');
    forRetry.catch(() => {}); // awaited (and reported) by its test
  });

  it('when the receiver keeps failing, then there are exactly 7 attempts with growing gaps, and the delivery ends FAILED', async () => {
    const { a, event, row } = await failedDelivery('/down');
    expect(row.attempt_count).toBe(7);
    // BullMQ has given up too: the first attempt was made in the lane (no job), the six retries by
    // one job, failed after its 6 attempts, so no 8th is scheduled.
    const job = (await t.s.queues.get('webhook-delivery').getJob(row.id))!;
    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(6);
    expect(rx.received.filter((r) => r.path === '/down')).toHaveLength(7);

    const attempts = await t.sql<{ attempt: number; started_at: Date; status_code: number; error: string }[]>`
      select attempt, started_at, status_code, error from webhook_attempts where delivery_id = ${row.id} order by attempt`;
    expect(attempts.map((x) => x.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(attempts.every((x) => x.status_code === 500 && x.error === 'HTTP 500')).toBe(true);
    const gaps = attempts.slice(1).map((x, i) => x.started_at.getTime() - attempts[i]!.started_at.getTime());
    // BullMQ's exponential backoff waits base × 2^(n-1) after the nth failure (150, 300, 600, 1200,
    // 2400, 4800 ms): never less. A loaded machine only adds pick-up delay, so there is no upper
    // bound per gap; the gaps from the fourth on, where the backoff outweighs that delay, grow.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(BASE * 2 ** i - 5));
    for (let i = 3; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThan(gaps[i - 1]!);

    const api = await t.request('GET', `/v1/events/${event.id}/deliveries`, { key: a.test });
    expect(api.body.data[0]).toMatchObject({ status: 'FAILED', attempt_count: 7, next_attempt_at: null });
    expect(api.body.data[0].attempts).toHaveLength(7);
    expect(api.body.data[0].attempts[6]).toMatchObject({ attempt: 7, status_code: 500, response_body: 'answer 500' });
  });

  it('when the failed job is retried from Bull Board, then one more attempt is made and a success ends the delivery SUCCEEDED', async () => {
    const { event, row } = await forRetry;
    const deliveryId = row.id;
    const unauth = await t.request('GET', '/admin/queues');
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect((await t.request('GET', '/admin/queues', { headers: basic('ops', 'wrong') })).status).toBe(401);
    expect((await t.request('GET', '/admin/queues', { headers: basic('wrong', 'board-secret') })).status).toBe(401);

    const page = await t.request('GET', '/admin/queues', { headers: basic('ops', 'board-secret') });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const queues = await t.request('GET', '/admin/queues/api/queues', { headers: basic('ops', 'board-secret') });
    expect(queues.status).toBe(200);
    expect(queues.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(Object.values(QUEUE_NAMES).sort());
    const job = await t.request('GET', `/admin/queues/api/queues/webhook-delivery/${deliveryId}`, { headers: basic('ops', 'board-secret') });
    expect(job.status).toBe(200);
    expect(job.body.status).toBe('failed');
    expect(job.body.job.failedReason).toMatch(/no attempts left/);

    healed.add('/down-board');
    const retry = await t.request('PUT', `/admin/queues/api/queues/webhook-delivery/${deliveryId}/retry`, { headers: basic('ops', 'board-secret') });
    expect(retry.status).toBe(204);
    const [done] = await eventually(async () => {
      const r = await deliveryRows(t, event.id);
      return r[0]?.status === 'SUCCEEDED' && r;
    });
    expect(done!.attempt_count).toBe(8);
    expect(rx.received.filter((r) => r.path === '/down-board').map((r) => JSON.parse(r.body).id)).toEqual(Array(8).fill(event.id));
  });
});
