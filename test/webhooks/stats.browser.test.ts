import { mkdir } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATS_BUCKETS_MS } from '../../src/webhooks/stats.ts';
import { cspViolations, signInBrowser, SHOTS } from '../helpers/dash-client.ts';
import { DESKTOP, launchBrowser, PHONE, withPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, emit } from './helpers.ts';
import { startReceiver, type Receiver } from './receiver.ts';

// Issue 26, point 5: per-endpoint analytics from an hourly rollup kept in the attempts' transaction,
// read in one indexed query; the API and the dashboard's chart (SVG within the strict CSP).

const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: '100000' } });
let rx: Receiver;
let browser: Browser;
beforeAll(async () => {
  // Under /mixed, every third request fails.
  rx = await startReceiver((n, r) => (r.path === '/mixed' && n % 3 === 2 ? 500 : 200));
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await rx.close();
});

const HOUR = 3600_000;
const attemptsTo = async (endpointId: string) =>
  (await t.sql<{ n: number }[]>`
    select count(*)::int as n from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id where d.endpoint_id = ${endpointId}`)[0]!.n;

describe('delivery analytics', () => {
  let acct: { accountId: string; test: string; live: string };
  let ep: { id: string };

  beforeAll(async () => {
    acct = await t.account();
    ep = await createEndpoint(t, acct.test, { url: `${rx.url}/mixed` });
    for (let i = 0; i < 9; i++) await emit(t, acct.accountId, false, 'payment.succeeded');
    await eventually(async () => (await attemptsTo(ep.id)) === 9);
  });

  it('when attempts were made, then the stats give attempts, success rate and latency over 24 hours and 30 days, matching the attempts recorded', async () => {
    const counted = await t.sql<{ ok: number; failed: number }[]>`
      select count(*) filter (where a.error is null)::int as ok, count(*) filter (where a.error is not null)::int as failed
      from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id where d.endpoint_id = ${ep.id}`;
    const ok = counted[0]!.ok;
    expect(ok + counted[0]!.failed).toBe(9);
    // An hour of 10 days ago, and one of 40 days ago in another slot of the ring (outside both periods).
    const tenDays = Math.floor((Date.now() - 10 * 24 * HOUR) / HOUR);
    const fortyDays = Math.floor((Date.now() - 40 * 24 * HOUR) / HOUR) + 1;
    await t.sql`
      insert into webhook_endpoint_hourly (endpoint_id, slot, hour, attempts, succeeded, latency_buckets) values
        (${ep.id}, ${tenDays % 720}, to_timestamp(${tenDays * 3600}), 10, 5, '{0,0,0,0,0,10,0,0,0,0}'),
        (${ep.id}, ${fortyDays % 720}, to_timestamp(${fortyDays * 3600}), 100, 0, '{0,0,0,0,0,0,0,0,0,100}')`;

    const res = await t.request('GET', `/v1/webhook-endpoints/${ep.id}/stats`, { key: acct.test });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'webhook_endpoint_stats',
      endpoint_id: ep.id,
      last_24_hours: { attempts: 9, succeeded: ok, failed: 9 - ok, success_rate: Math.round((ok / 9) * 10_000) / 10_000 },
      last_30_days: { attempts: 19, succeeded: ok + 5, failed: 14 - ok },
    });
    // The median falls in the histogram bucket of the attempts' true median; the old hour's 500-1000 ms pulls the 30-day p95 up.
    const durations = (await t.sql<{ duration_ms: number }[]>`
      select a.duration_ms from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id where d.endpoint_id = ${ep.id} order by a.duration_ms`).map((r) => r.duration_ms);
    const median = durations[4]!;
    const upper = STATS_BUCKETS_MS.find((b) => median <= b)!;
    const lower = [0, ...STATS_BUCKETS_MS][STATS_BUCKETS_MS.indexOf(upper as never)]!;
    expect(res.body.last_24_hours.latency_p50_ms).toBeGreaterThanOrEqual(lower);
    expect(res.body.last_24_hours.latency_p50_ms).toBeLessThanOrEqual(upper);
    expect(res.body.last_30_days.latency_p95_ms).toBeGreaterThan(500);
    expect(res.body.hourly).toHaveLength(24);
    expect(res.body.hourly.reduce((n: number, h: { attempts: number }) => n + h.attempts, 0)).toBe(9);

    const other = await t.account();
    expect((await t.request('GET', `/v1/webhook-endpoints/${ep.id}/stats`, { key: other.test })).status).toBe(404);
    expect((await t.request('GET', `/v1/webhook-endpoints/${ep.id}/stats?x=1`, { key: acct.test })).body.error.param).toBe('x');
  });

  it('when the stats are read, then it is one query on the primary key, never a scan, however many endpoints have hours', async () => {
    await t.sql`
      insert into webhook_endpoint_hourly (endpoint_id, slot, hour, attempts, succeeded, latency_buckets)
      select 'we_other' || e, s, now() - make_interval(hours => s), 1, 1, '{1,0,0,0,0,0,0,0,0,0}'
      from generate_series(1, 60) e, generate_series(0, 719) s`;
    await t.sql`analyze webhook_endpoint_hourly`;
    // The statement of src/webhooks/stats.ts hourlyOf.
    const plan = await t.sql.unsafe(
      'explain (format json) select hour, attempts, succeeded, latency_buckets from webhook_endpoint_hourly where endpoint_id = $1 and hour > $2 order by hour',
      [ep.id, new Date(Date.now() - 720 * HOUR)],
    );
    const text = JSON.stringify(plan);
    expect(text).not.toContain('Seq Scan');
    expect(text).toContain('webhook_endpoint_hourly_pkey');
  });

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const)('when the endpoint page is opened on a %s, then it shows the chart and its tables, within the CSP', async (device, viewport) => {
    await withPage(browser, viewport, async (page) => {
      const violations = cspViolations(page);
      await signInBrowser(page, t, acct.accountId, 'owner@stats.example');
      await page.goto(`${t.url}/dashboard/webhooks/${ep.id}`);
      const chart = page.locator('svg[data-chart="deliveries"]');
      await chart.scrollIntoViewIfNeeded();
      expect(await chart.isVisible()).toBe(true);
      expect(await page.getByRole('img', { name: 'Delivery attempts per hour, last 24 hours' }).count()).toBe(1);
      expect(await page.locator('#stats td', { hasText: 'Last 30 days' }).count()).toBe(1);
      expect(await chart.locator('rect').count()).toBe(48);
      await page.locator('#stats').screenshot({ path: `${SHOTS}/webhooks-stats-${device}.png` });
      expect(await page.locator('html').evaluate((el) => el.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      expect(violations).toEqual([]);
    });
  });
});
