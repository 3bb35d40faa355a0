import { within } from '../queue/bound.ts';
import { passStatuses } from '../repair/status.ts';
import { partitionsReach } from '../retention/store.ts';
import type { Services } from '../services.ts';
import { deliveryBacklog } from '../webhooks/deliveries.ts';
import { Lane } from '../webhooks/lane.ts';
import { QUEUE_STATES } from './definitions.ts';

/** Each reading of a scrape waits at most this long (Prometheus's own default timeout is 10 s). */
export const SCRAPE_READ_TIMEOUT_MS = 2000;

/**
 * The readings made when /metrics is scraped, not on any request's path: Postgres and Redis
 * answering, the repair passes' status and how far ahead the partitions reach (every process), and in a process that runs workers the
 * depth of every queue and the delivery backlog. All at once, each bounded by
 * SCRAPE_READ_TIMEOUT_MS; one that fails or is late is counted in metrics_scrape_errors_total and
 * its series are left out of this scrape (a stale number would look like a live one).
 */
export async function readAtScrape(s: Services): Promise<void> {
  const m = s.metrics;
  const read = async (source: string, clear: () => void, work: () => Promise<void>) => {
    try {
      await within(work(), SCRAPE_READ_TIMEOUT_MS, source);
    } catch {
      clear();
      m.scrapeErrors.inc({ source });
    }
  };
  const up = (dependency: string, ping: () => Promise<unknown>) =>
    within(ping(), SCRAPE_READ_TIMEOUT_MS, dependency).then(
      () => m.dependencyUp.set({ dependency }, 1),
      () => m.dependencyUp.set({ dependency }, 0),
    );
  const readings: Array<Promise<void>> = [
    up('postgres', () => s.sql`select 1`),
    up('redis', () => s.redis.ping()),
    read(
      'repair_pass_status',
      () => (m.repairLastSuccess.reset(), m.repairConsecutiveFailures.reset()),
      async () => {
        const rows = await passStatuses(s.sql);
        m.repairLastSuccess.reset();
        m.repairConsecutiveFailures.reset();
        for (const r of rows) {
          if (r.last_success_at) m.repairLastSuccess.set({ pass: r.pass }, r.last_success_at.getTime() / 1000);
          m.repairConsecutiveFailures.set({ pass: r.pass }, r.consecutive_failures);
        }
      },
    ),
    read(
      'partitions',
      () => m.partitionsAhead.reset(),
      async () => {
        const rows = await partitionsReach(s.sql);
        const now = Date.now();
        m.partitionsAhead.reset();
        for (const r of rows) m.partitionsAhead.set({ table: r.table }, r.reach ? (r.reach.getTime() - now) / 1000 : 0);
      },
    ),
  ];
  const backlog = [m.webhookOldestPending, m.webhookOverdue];
  const showBacklog = (on: boolean) => {
    for (const g of backlog) {
      const name = (g as unknown as { name: string }).name;
      const shown = m.registry.getSingleMetric(name) !== undefined;
      if (on && !shown) m.registry.registerMetric(g);
      if (!on && shown) m.registry.removeSingleMetric(name);
    }
  };
  if (!m.runsWorkers) showBacklog(false);
  if (m.runsWorkers) {
    readings.push(
      read(
        'queues',
        () => m.queueJobs.reset(),
        async () => {
          const [counts, lane] = await Promise.all([
            Promise.all(s.queues.all().map(async (q) => ({ queue: q.name, counts: await q.getJobCounts(...QUEUE_STATES) }))),
            new Lane(s.config.redisPrefix).counts(s.queues.redis),
          ]);
          m.queueJobs.reset();
          for (const { queue, counts: c } of counts) for (const state of QUEUE_STATES) m.queueJobs.set({ queue, state }, c[state] ?? 0);
          // The first-attempt lane (src/webhooks/lane.ts): deliveries waiting for their first attempt, and taken.
          m.queueJobs.set({ queue: 'webhook-lane', state: 'waiting' }, lane.waiting);
          m.queueJobs.set({ queue: 'webhook-lane', state: 'active' }, lane.active);
        },
      ),
      read(
        'webhook_deliveries',
        () => showBacklog(false),
        async () => {
          const b = await deliveryBacklog(s.sql);
          m.webhookOldestPending.set(b.oldestPendingSeconds);
          m.webhookOverdue.set(b.overdueSeconds);
          showBacklog(true);
        },
      ),
    );
  }
  await Promise.all(readings);
}
