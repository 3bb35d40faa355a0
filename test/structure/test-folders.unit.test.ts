import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Test folders (issue 24, point 2): a file of test/<a>/ imports from its own folder, from
// test/helpers/ (shared factories, fixture hooks, test cards) and from src/, workers/ or packages;
// never from another component's test folder. test/helpers/ imports no component test folder.
// Every import counts: static, re-exports, dynamic import() and `import('…')` types.

const ROOT = join(import.meta.dirname, '../..');
const SHARED = 'helpers';

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'artifacts' || e.name === 'node_modules' ? [] : files(p);
    return /\.(ts|mts|js|mjs)$/.test(p) ? [p] : [];
  });
}

/** The relative module specifiers of a file, resolved from the repository root. */
export function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    let spec: string | undefined;
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) spec = n.moduleSpecifier.text;
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteralLike(n.arguments[0])) spec = n.arguments[0].text;
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) spec = n.argument.literal.text;
    if (spec?.startsWith('.')) out.push(normalize(join(dirname(file), spec)).replaceAll('\\', '/'));
    ts.forEachChild(n, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest));
  return out;
}

/** The test folder of a path under test/ (`checkout` for test/checkout/x.ts), or null (test/*.ts, outside test/). */
const folderOf = (path: string): string | null => {
  const parts = path.split('/');
  return parts[0] === 'test' && parts.length > 2 ? parts[1]! : null;
};

/** The imports of `file` that break the rule, as "file -> target". */
export function crossings(file: string, targets: readonly string[]): string[] {
  const from = folderOf(file);
  if (!from) return [];
  return targets.filter((to) => {
    const into = folderOf(to);
    return into !== null && into !== from && into !== SHARED;
  }).map((to) => `${file} -> ${to}`);
}

describe('imports between test folders', () => {
  it('when the rule reads imports, then it sees static, re-exported, dynamic and type imports, and flags only another component folder', () => {
    const text = [
      "import { a } from '../checkout/helpers.ts';",
      "export { b } from '../webhooks/receiver.ts';",
      "const c = await import('../ops/private-redis.ts');",
      "let d: import('../dashboard/client.ts').DashClient;",
      "import { e } from '../helpers/factories.ts';",
      "import { f } from './helpers.ts';",
      "import { g } from '../../src/lib/ids.ts';",
      "import { h } from 'vitest';",
    ].join('\n');
    const file = 'test/portal/x.test.ts';
    expect(crossings(file, importsOf(file, text))).toEqual([
      'test/portal/x.test.ts -> test/checkout/helpers.ts',
      'test/portal/x.test.ts -> test/webhooks/receiver.ts',
      'test/portal/x.test.ts -> test/ops/private-redis.ts',
      'test/portal/x.test.ts -> test/dashboard/client.ts',
    ]);
    expect(crossings('test/helpers/f.ts', importsOf('test/helpers/f.ts', "import { a } from '../checkout/helpers.ts';"))).toEqual(['test/helpers/f.ts -> test/checkout/helpers.ts']);
  });

  it('when any file under test/ imports, then it imports from its own folder, test/helpers, or outside test/, never another component test folder', () => {
    const all = files('test');
    expect(all.length).toBeGreaterThan(100);
    const bad = all.flatMap((f) => crossings(f, importsOf(f, readFileSync(join(ROOT, f), 'utf8'))));
    expect(bad).toEqual([]);
  });
});
