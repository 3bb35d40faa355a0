import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.ts';

// Four projects, so that a developer runs what a change touches (docs/architecture.md, README "Tests"):
// - `unit`: pure functions (`*.unit.test.ts`), no Postgres, Redis or browser: runs in seconds.
// - `integration`: the service through HTTP on real Postgres and Redis (the global setup finds or starts them).
// - `browser`: the pages driven in Chromium (`*.browser.test.ts`).
// - `drills`: fault and operations drills (test/ops: restarts, shutdown, Redis Cluster, PgBouncer,
//   backup and restore, zero set-up), each on private instances.
// `npm test` runs all four.
const UNIT = 'test/**/*.unit.test.ts';
const BROWSER = 'test/**/*.browser.test.ts';
/** The files of test/ops/ but its input fuzzers, which are API tests like any other (integration). */
const FUZZERS = new Set(['input-bounds.test.ts', 'no-5xx.test.ts', 'no-5xx-dashboard.test.ts']);
const DRILLS = readdirSync(new URL('test/ops/', import.meta.url))
  .filter((f) => f.endsWith('.test.ts') && !f.endsWith('.unit.test.ts') && !f.endsWith('.browser.test.ts') && !FUZZERS.has(f))
  .map((f) => `test/ops/${f}`);
const SERVICES = { globalSetup: ['test/global-setup.ts'] };
/**
 * Files of these projects run one after another in a worker process that keeps its loaded modules
 * (`isolate: false`): loading the service's modules afresh for each file cost about 2 s of CPU per
 * file (433 s of a 1,235 s CI run). No test file stubs modules, globals, the environment or timers,
 * and each works in its own database, Redis prefix and server; the drills, which start processes
 * and private servers, keep a fresh process per file.
 */
const SHARED = { isolate: false };
/**
 * Files at once. Most files wait more than they compute (a service's jobs, a browser, a child
 * process), so the unit, integration and browser files run four at a time on two cores. The drills
 * time outages and start processes: they run afterwards (their own group), three at a time
 * (TEST_DRILL_WORKERS): alone, the project took 98 s at two (the machine 68 % busy), 75 s at three
 * (83 %), 71 s at four (94 %), every drill passing; at four beside everything else their timings
 * failed on a loaded machine.
 */
const WORKERS = Number(process.env.TEST_WORKERS ?? 4);
const DRILL_WORKERS = Number(process.env.TEST_DRILL_WORKERS ?? 3);

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: WORKERS,
    // The longest drills and unit files first (test/sequencer.ts): a clean clone has no timings to order by.
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test/artifacts/vitest.json' },
    projects: [
      { extends: true, test: { name: 'unit', include: [UNIT], ...SHARED } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [UNIT, BROWSER, ...DRILLS], ...SERVICES, ...SHARED } },
      // One Chromium for the project's files (test/browser-setup.ts), each test in a context of its own.
      { extends: true, test: { name: 'browser', include: [BROWSER], globalSetup: [...SERVICES.globalSetup, 'test/browser-setup.ts'], ...SHARED } },
      { extends: true, test: { name: 'drills', include: DRILLS, ...SERVICES, maxWorkers: Math.min(WORKERS, DRILL_WORKERS), sequence: { groupOrder: 1 } } },
    ],
  },
});
