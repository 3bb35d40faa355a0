import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds a file took in a quiet full run (2026-11-27, four workers, drills two): the longest of
 * each project, and every drill. Each group of files ends when its last file does, so a long file
 * that starts last makes the whole run wait for it: on a clean clone (CI) vitest has no timings of
 * an earlier run and starts files in the order it found them, which put the two longest drills last
 * and left one worker idle for 20 s. These start first in their project; the others keep vitest's
 * order (by its cached timings when it has them).
 */
const SECONDS: Record<string, number> = {
  // drills (their own group, two at a time: the order decides the group's end)
  'test/ops/shutdown.test.ts': 26,
  'test/ops/postgres-restart.test.ts': 23,
  'test/ops/zero-setup.test.ts': 21,
  'test/ops/pgbouncer-restart.test.ts': 15,
  'test/ops/backup-restore.test.ts': 13,
  'test/ops/export-worker-kill.test.ts': 13,
  'test/ops/redis-faults.test.ts': 12,
  'test/ops/redis-cluster.test.ts': 11,
  'test/ops/shutdown-worker.test.ts': 10,
  'test/ops/pgbouncer.test.ts': 10,
  'test/ops/cluster.test.ts': 6,
  'test/ops/port-in-use.test.ts': 6,
  // integration
  'test/disputes/api.test.ts': 30,
  'test/ops/no-5xx-dashboard.test.ts': 28,
  'test/platform/process.test.ts': 28,
  'test/ops/no-5xx.test.ts': 27,
  'test/platform/readme.test.ts': 26,
  'test/cli/listen.test.ts': 17,
  'test/metrics/prometheus.test.ts': 17,
  'test/platform/production-database.test.ts': 16,
  'test/webhooks/throttle.test.ts': 16,
  'test/dashboard/payments.test.ts': 16,
  // browser
  'test/dashboard/passkeys.browser.test.ts': 21,
  'test/openapi/docs.browser.test.ts': 20,
  'test/dashboard/keys-settings.browser.test.ts': 19,
  'test/dashboard/webhooks.browser.test.ts': 17,
  'test/dashboard/sessions-links.browser.test.ts': 14,
  // unit
  'test/platform/cli.unit.test.ts': 8,
};

/** Vitest's order, with the files of SECONDS first within their project, longest first. */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification) => SECONDS[f.moduleId.slice(root.length + 1)] ?? 0;
    const place = new Map(sorted.map((f, i) => [f, i]));
    // Projects stay where vitest put them (each runs after the other); within one, longest first.
    const projectStart = new Map<string, number>();
    for (const [f, i] of place) if (!projectStart.has(f.project.name)) projectStart.set(f.project.name, i);
    return sorted.toSorted(
      (a, b) => projectStart.get(a.project.name)! - projectStart.get(b.project.name)! || seconds(b) - seconds(a) || place.get(a)! - place.get(b)!,
    );
  }
}
