// `npm run bench [-- <suite> …]`: runs the named suites, or every bench/<suite>.ts that exists.
// Sizes: BENCH_ROWS (default 1,000,000), BENCH_SECONDS per measurement (default 10).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchSettings, ROOT, say, type BenchSettings } from './lib.ts';

const SUITES = ['customers', 'checkout', 'webhooks', 'links', 'email', 'capacity', 'floors'];

const file = (name: string) => path.join(ROOT, 'bench', `${name}.ts`);

const asked = process.argv.slice(2).filter((a) => a !== '--');
for (const name of asked) {
  if (!SUITES.includes(name) && !existsSync(file(name))) {
    process.stderr.write(`unknown suite ${name}: known suites are ${SUITES.join(', ')}\n`);
    process.exit(2);
  }
}
const names = asked.length ? asked : SUITES.filter((n) => existsSync(file(n)));
if (names.some((n) => !existsSync(file(n)))) {
  process.stderr.write(`not written yet: ${names.filter((n) => !existsSync(file(n))).join(', ')}\n`);
  process.exit(2);
}

const settings = benchSettings();
say(`suites ${names.join(', ')}; ${settings.rows.toLocaleString('en-US')} rows, ${settings.seconds} s per measurement, ${settings.connections} connections`);
let failed = 0;
for (const name of names) {
  const mod = (await import(pathToFileURL(file(name)).href)) as { run?: (s: BenchSettings) => Promise<void> };
  if (typeof mod.run !== 'function') {
    say(`${name}: bench/${name}.ts exports no run(settings); skipped`);
    failed++;
    continue;
  }
  const t0 = Date.now();
  try {
    await mod.run(settings);
    say(`${name}: done in ${Math.round((Date.now() - t0) / 1000)} s; see bench/RESULTS.md`);
  } catch (err) {
    failed++;
    say(`${name}: failed: ${(err as Error).stack ?? String(err)}`);
  }
}
process.exit(failed ? 1 : 0);
