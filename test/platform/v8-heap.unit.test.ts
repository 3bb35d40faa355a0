import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { V8_FLAGS } from '../../src/ops/v8-heap.ts';

// src/ops/v8-heap.ts: every process of the service sets V8's flags before its modules load.
describe("V8's flags of the service's processes", () => {
  it('when main.ts, web.ts or worker.ts starts, then it sets them before it imports the runtime', () => {
    for (const entry of ['main.ts', 'web.ts', 'worker.ts']) {
      const text = readFileSync(path.resolve('src', entry), 'utf8');
      const tuned = text.indexOf('\ntuneHeap();');
      const runtime = text.indexOf("await import('./runtime.ts')");
      expect(tuned, entry).toBeGreaterThan(0);
      expect(runtime, entry).toBeGreaterThan(tuned);
    }
  });

  it("when a process sets them, then this Node's V8 knows each flag (it names an unknown one on stderr)", () => {
    expect(V8_FLAGS).toContain('--no-allocation-site-pretenuring');
    const run = (code: string) => spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    const ours = run(`import { tuneHeap } from ${JSON.stringify(path.resolve('src/ops/v8-heap.ts'))}; tuneHeap(); console.log('set');`);
    expect({ status: ours.status, stdout: ours.stdout.trim(), stderr: ours.stderr }).toEqual({ status: 0, stdout: 'set', stderr: '' });
    // The check can fail: V8 names a flag it does not know on stderr (and goes on).
    const unknown = run("(await import('node:v8')).setFlagsFromString('--no-such-flag-here'); console.log('set');");
    expect(unknown.stderr).toContain('unrecognized flag --no-such-flag-here');
  });
});
