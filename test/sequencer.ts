import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds a file took in a quiet full run (2026-11-27, drills two at a time). The drills run last,
 * in a group of their own, and the group ends when its last file does: on a clean clone (CI) vitest
 * has no timings of an earlier run and starts files in the order it found them, which put the two
 * longest drills last and left one worker idle for 20 s. The unit files run at the very end of the
 * other group, where cli.unit.test.ts alone took 8 s. These start first in their project; the other
 * files keep vitest's order. (Longest first everywhere was slower in the one run that tried it: the four heaviest browser files
 * at once took the browser project from 68 s to 80 s.)
 */
const SECONDS: Record<string, number> = {
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
  'test/platform/cli.unit.test.ts': 8,
  // The longest integration files (two full runs on 2026-11-27, 4 and 6 workers): started late, they
  // were the last files running, 194 to 238 s into a 371 s run, with the drills waiting for them.
  'test/platform/process.test.ts': 40,
  'test/ops/no-5xx-dashboard.test.ts': 38,
  'test/platform/readme.test.ts': 36,
  'test/ops/no-5xx.test.ts': 32,
  'test/disputes/api.test.ts': 32,
  'test/exports/api.test.ts': 28,
  'test/cli/listen.test.ts': 20,
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
