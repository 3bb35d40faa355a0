import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure functions, no Postgres or Redis: `npm run test:unit` runs in seconds)
// and `integration` (everything else, on the services the global setup finds or starts).
// `npm test` runs both.
const UNIT = 'test/**/*.unit.test.ts';

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test/artifacts/vitest.json' },
    projects: [
      { extends: true, test: { name: 'unit', include: [UNIT] } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [UNIT], globalSetup: ['test/global-setup.ts'] } },
    ],
  },
});
