import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the suite's files start in (vitest.config.ts, `sequence.sequencer`). vitest's own order
 * on a clean clone is the projects by name, then the glob's order: a minute-long drill or fuzzer
 * could start last and run alone while the other worker idles. Here the projects run drills,
 * browser, integration, unit (a project's files stay together: a worker keeps its loaded modules
 * only from one file of a project to the next), and within a project the longest files first, so
 * that the short ones fill the gaps at the end (longest processing time first).
 *
 * A file's expected time: this checkout's last run of it (vitest's cache), else the committed
 * table test/durations.json (written by `npm run test:durations` from a full run's JSON report),
 * else its size as a stand-in (a new file, one millisecond a byte).
 */
export const PROJECT_ORDER = ['drills', 'browser', 'integration', 'unit'];
const TABLE = path.join(import.meta.dirname, 'durations.json');

function readTable(): Record<string, number> {
  if (!existsSync(TABLE)) return {};
  try {
    return JSON.parse(readFileSync(TABLE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const table = readTable();
    const root = this.ctx.config.root;
    const expected = new Map<TestSpecification, number>();
    for (const f of files) {
      const file = path.relative(root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${file}`)?.duration;
      expected.set(f, cached ?? table[file] ?? statSync(f.moduleId).size);
    }
    const rank = (f: TestSpecification) => {
      const i = PROJECT_ORDER.indexOf(f.project.name);
      return i === -1 ? PROJECT_ORDER.length : i;
    };
    return [...files].sort((a, b) => rank(a) - rank(b) || expected.get(b)! - expected.get(a)!);
  }
}
