// `npm run test:durations`: writes test/durations.json, each test file's wall time in the last run's
// JSON report (test/artifacts/vitest.json, written by every `npx vitest run`), for the suite's
// order (test/sequencer.ts). Run it after a full run on a quiet machine; commit the table.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const report = JSON.parse(readFileSync(path.join(root, 'test/artifacts/vitest.json'), 'utf8')) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
const table: Record<string, number> = {};
for (const r of report.testResults) table[path.relative(root, r.name)] = Math.round(r.endTime - r.startTime);
const sorted = Object.fromEntries(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(path.join(root, 'test/durations.json'), `${JSON.stringify(sorted, null, 1)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files, ${Math.round(Object.values(sorted).reduce((a, b) => a + b, 0) / 1000)} s of file time\n`);
