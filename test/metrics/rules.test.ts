import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasPromtool, promtool } from '../helpers/metrics.ts';
import { root } from '../helpers/process.ts';

// The shipped alert rules (docs/prometheus/alerts.yml) checked by Debian's promtool: their syntax,
// and their unit tests (docs/prometheus/alerts.test.yml) with readings each alert fires on or not.

const DIR = join(root, 'docs/prometheus');
const names = (file: string, pattern: RegExp) => [...readFileSync(join(DIR, file), 'utf8').matchAll(pattern)].map((m) => m[1]!);

describe('alert rules', () => {
  it('when the rules file is checked, then promtool finds every rule valid', (ctx) => {
    if (!hasPromtool) return ctx.skip('promtool is not installed (Debian package prometheus; .ci/run installs it)');
    const r = promtool(['check', 'rules', 'alerts.yml'], undefined, DIR);
    expect(r.out).toContain('SUCCESS: 15 rules found');
    expect(r.status).toBe(0);
  });

  it("when the rules' unit tests run, then each alert fires on its readings and not on the others", (ctx) => {
    if (!hasPromtool) return ctx.skip('promtool is not installed (Debian package prometheus; .ci/run installs it)');
    const r = promtool(['test', 'rules', 'alerts.test.yml'], undefined, DIR);
    expect(r.out).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('when the tests are read, then every alert has a case where it fires', () => {
    const alerts = names('alerts.yml', /- alert: (\w+)/g);
    expect(alerts).toHaveLength(15);
    const fired = new Set(names('alerts.test.yml', /runbook: docs\/operations\.md, Metrics and alerts, (\w+)/g));
    expect(alerts.filter((a) => !fired.has(a))).toEqual([]);
    // And each one's runbook entry exists in the operations guide.
    const guide = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    expect(alerts.filter((a) => !guide.includes(`**${a}**`))).toEqual([]);
  });
});
