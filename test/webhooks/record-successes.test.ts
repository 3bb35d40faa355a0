import { describe, expect, it } from 'vitest';
import { healthSettings, recordOutcomes } from '../../src/webhooks/health.ts';
import type { AttemptRecord } from '../../src/webhooks/deliveries.ts';
import { useTestServer } from '../helpers/server.ts';
import { createEndpoint, deliveryRows, emit } from './helpers.ts';

// Issue 28.5: a batch of successes to healthy endpoints is recorded by one statement
// (src/webhooks/successes.ts) instead of the transaction; the same rows must come out of it: the
// attempts, the deliveries SUCCEEDED, the hourly counts (once per attempt, never twice), and a
// failing endpoint's run ended (the transaction does that one).

const t = useTestServer({ env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
const h = healthSettings({ webhookDisableAfterMs: 5 * 86_400_000, webhookDisableMinFailures: 10 });

/** Three deliveries to one new endpoint (no worker runs them). */
async function threeDeliveries() {
  const a = await t.account();
  const ep = await createEndpoint(t, a.test, { url: 'http://127.0.0.1:9/hooks', enabled_events: ['payment.succeeded'] });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await deliveryRows(t, (await emit(t, a.accountId, false, 'payment.succeeded')).id))[0]!.id);
  return { endpointId: ep.id as string, ids };
}

const success = (id: string, endpointId: string, durationMs: number, startedAt = new Date()): AttemptRecord => ({
  id,
  endpointId,
  n: 1,
  retryDelayMs: 600_000,
  result: { ok: true, startedAt, durationMs, statusCode: 200, error: null, responseBody: 'ok', targetPrivate: true },
});

const hourly = async (endpointId: string) =>
  t.sql<{ attempts: number; succeeded: number; latency_buckets: number[] }[]>`
    select attempts, succeeded, latency_buckets from webhook_endpoint_hourly where endpoint_id = ${endpointId}`;

describe('recording a batch of successes', () => {
  it('when every attempt of a batch succeeded, then the attempts, the SUCCEEDED deliveries and the hourly counts are written, and a second run of the same attempts counts nothing', async () => {
    const { endpointId, ids } = await threeDeliveries();
    const startedAt = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 + 1000); // one hour for all three
    const records = [success(ids[0]!, endpointId, 3, startedAt), success(ids[1]!, endpointId, 30, startedAt), success(ids[2]!, endpointId, 20_000, startedAt)];

    expect(await recordOutcomes(t.sql, records, h)).toEqual(records.map(() => ({ status: 'SUCCEEDED', action: null })));
    const rows = await t.sql<{ id: string; status: string; attempt_count: number; next_attempt_at: Date | null; attempts: number }[]>`
      select d.id, d.status, d.attempt_count, d.next_attempt_at, (select count(*)::int from webhook_attempts a where a.delivery_id = d.id) as attempts
      from webhook_deliveries d where d.id = any(${ids}::text[]) order by d.id`;
    expect(rows).toEqual(ids.map((id) => ({ id, status: 'SUCCEEDED', attempt_count: 1, next_attempt_at: null, attempts: 1 })));
    expect(await hourly(endpointId)).toEqual([{ attempts: 3, succeeded: 3, latency_buckets: [1, 1, 0, 0, 0, 0, 0, 0, 0, 1] }]);

    // The same attempts again (a duplicate run of the jobs): already recorded, not counted.
    expect(await recordOutcomes(t.sql, records, h)).toEqual(records.map(() => ({ status: null, action: null })));
    expect(await hourly(endpointId)).toEqual([{ attempts: 3, succeeded: 3, latency_buckets: [1, 1, 0, 0, 0, 0, 0, 0, 0, 1] }]);
  });

  it('when an endpoint of the batch is in a run of failures, then its successes end the run, as in the transaction', async () => {
    const { endpointId, ids } = await threeDeliveries();
    await t.sql`update webhook_endpoints set failing_since = now() - interval '1 hour', failed_attempts = 4 where id = ${endpointId}`;

    const out = await recordOutcomes(t.sql, [success(ids[0]!, endpointId, 3), success(ids[1]!, endpointId, 3)], h);
    expect(out.map((o) => o.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const [ep] = await t.sql<{ failing_since: Date | null; failed_attempts: number }[]>`select failing_since, failed_attempts from webhook_endpoints where id = ${endpointId}`;
    expect(ep).toEqual({ failing_since: null, failed_attempts: 0 });
    expect((await hourly(endpointId))[0]).toMatchObject({ attempts: 2, succeeded: 2 });
  });
});
