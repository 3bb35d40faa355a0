import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The dependency rule of docs/architecture.md, read from the import statements of src/ and workers/
// (static, re-exports, dynamic import() and `import('…')` types), type-only imports included: a type
// import is a dependency of the code even though Node erases it. Only `import type` (and `export
// type`) is type-only: `import { type X }` still loads the module in Node 24, so it counts as a load.

const ROOT = join(import.meta.dirname, '../..');

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** The relative imports of one file's text, resolved to paths from the repository root. */
function edgesOf(file: string, text: string): Edge[] {
  const edges: Edge[] = [];
  const visit = (n: ts.Node): void => {
    let spec: string | undefined;
    let typeOnly = false;
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      spec = n.moduleSpecifier.text;
      // Without a clause (import './x.ts') the module runs for its effects; `import { type X }` loads it too.
      typeOnly = n.importClause?.isTypeOnly ?? false;
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      spec = n.moduleSpecifier.text;
      typeOnly = n.isTypeOnly;
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) {
      spec = n.arguments[0].text;
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      spec = n.argument.literal.text; // a type written `import('./x.ts').X`
      typeOnly = true;
    }
    if (spec?.startsWith('.')) edges.push({ from: file, to: normalize(join(dirname(file), spec)).replaceAll('\\', '/'), typeOnly });
    ts.forEachChild(n, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest));
  return edges;
}

const importEdges = (files: readonly string[]): Edge[] => files.flatMap((f) => edgesOf(f, readFileSync(join(ROOT, f), 'utf8')));

/** Shared infrastructure: used by every component, uses none. */
const BASE = new Set(['lib', 'db', 'queue']);

/** The folder a file belongs to: `workers`, a folder of src/, or `root` for src/*.ts (entry points, config, the Services type, the composition root). */
function folderOf(file: string): string {
  if (file.startsWith('workers/')) return 'workers';
  const parts = file.split('/');
  return parts.length === 2 ? 'root' : parts[1]!;
}

/** Every cycle of a directed graph, as the strongly connected components of more than one node. */
function cycles(adj: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of adj.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || adj.get(v)?.has(v)) found.push(scc.sort());
    }
  };
  for (const v of adj.keys()) if (!index.has(v)) connect(v);
  return found;
}

function graph(edges: readonly Edge[], node: (f: string) => string | undefined): Map<string, Set<string>> {
  const adj = new Map<string, Set<string>>();
  for (const e of edges) {
    const a = node(e.from);
    const b = node(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    if (!adj.has(a)) adj.set(a, new Set());
    adj.get(a)!.add(b);
  }
  return adj;
}

const FILES = [...sources('src'), ...sources('workers')];
const EDGES = importEdges(FILES);

/** The imports of one folder's files that leave it, as `file -> target`. */
const leaving = (folder: string) => EDGES.filter((e) => folderOf(e.from) === folder && folderOf(e.to) !== folder);
const show = (edges: readonly Edge[]) => edges.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}`);

const fileGraph = (edges: readonly Edge[]) => graph(edges, (f) => f);

describe('dependencies read from the imports of src/ and workers/', () => {
  it('when the imports are read, then they are found (the reader sees the tree)', () => {
    expect(FILES).toContain('src/app.ts');
    expect(EDGES.some((e) => e.from === 'src/app.ts' && e.to === 'src/services.ts' && e.typeOnly)).toBe(true);
    expect(cycles(new Map([['a', new Set(['b'])], ['b', new Set(['a'])]]))).toEqual([['a', 'b']]);
  });

  it('when a file imports with `import type`, `import { type X }` or an `import()` type, then only `import type` and the `import()` type are type-only', () => {
    const edges = edgesOf(
      'src/x/a.ts',
      [
        "import type { B } from './b.ts';",
        "import { type C } from './c.ts';",
        "import { d, type D } from './d.ts';",
        "export type { E } from './e.ts';",
        "let f: import('./f.ts').F;",
        "await import('./g.ts');",
      ].join('\n'),
    );
    expect(edges.map((e) => [e.to, e.typeOnly])).toEqual([
      ['src/x/b.ts', true],
      ['src/x/c.ts', false],
      ['src/x/d.ts', false],
      ['src/x/e.ts', true],
      ['src/x/f.ts', true],
      ['src/x/g.ts', false],
    ]);
  });

  it('when two files import each other by types only, then that is a cycle (the check counts type imports)', () => {
    const edges = [...edgesOf('src/x/a.ts', "import type { B } from './b.ts';"), ...edgesOf('src/x/b.ts', "import type { A } from './a.ts';")];
    expect(cycles(fileGraph(edges))).toEqual([['src/x/a.ts', 'src/x/b.ts']]);
  });

  it('when files import each other, then no file reaches itself again (type imports included, no exemption)', () => {
    expect(cycles(fileGraph(EDGES))).toEqual([]);
  });

  it('when the component folders and workers/ are drawn as a graph, then it has no cycle', () => {
    // The root files (src/*.ts) are left out: components may name the Services and Config types,
    // and only runtime.ts builds anything (through compose.ts); the base folders are checked below
    // to use no component, so no cycle can pass through them.
    const adj = graph(EDGES, (f) => {
      const folder = folderOf(f);
      return folder === 'root' || BASE.has(folder) ? undefined : folder;
    });
    expect(cycles(adj)).toEqual([]);
  });

  it('when services.ts is read, then it holds types only: `import type` of modules and type declarations', () => {
    const sf = ts.createSourceFile('src/services.ts', readFileSync(join(ROOT, 'src/services.ts'), 'utf8'), ts.ScriptTarget.Latest);
    const values = sf.statements.filter((n) => !(ts.isImportDeclaration(n) && n.importClause?.isTypeOnly) && !ts.isInterfaceDeclaration(n) && !ts.isTypeAliasDeclaration(n));
    expect(values.map((n) => n.getText(sf).split('\n')[0])).toEqual([]);
  });

  it('when anything in src/ or workers/ imports the composition root (compose.ts), then only runtime.ts: nothing reaches the components through it', () => {
    const bad = EDGES.filter((e) => e.to === 'src/compose.ts' && e.from !== 'src/runtime.ts');
    expect(show(bad)).toEqual([]);
    expect(EDGES.some((e) => e.from === 'src/runtime.ts' && e.to === 'src/compose.ts')).toBe(true);
  });

  it('when events/ imports, then only lib/ and db/ (and the Services type), never a business component', () => {
    const bad = leaving('events').filter((e) => !['lib', 'db'].includes(folderOf(e.to)) && !(e.typeOnly && e.to === 'src/services.ts'));
    expect(show(bad)).toEqual([]);
  });

  it('when lib/ imports, then only lib/: it is the bottom layer (no component, no db/, no queue/)', () => {
    expect(show(leaving('lib'))).toEqual([]);
  });

  it('when db/ or queue/ import, then only each other and lib/: no component, not even the Services type', () => {
    const bad = [...leaving('db'), ...leaving('queue')].filter((e) => !BASE.has(folderOf(e.to)));
    expect(show(bad)).toEqual([]);
  });

  it('when anything uses openapi/, then only the composition root: the document is made from the components, which never read it', () => {
    const bad = EDGES.filter((e) => folderOf(e.to) === 'openapi' && !['root', 'openapi'].includes(folderOf(e.from)));
    expect(show(bad)).toEqual([]);
  });

  it('when anything uses metrics/, then only the composition root: components count through s.metrics and never import it', () => {
    // metrics/definitions.ts is named by the Services type (its Metrics interface); it imports nothing that names Services.
    const bad = EDGES.filter((e) => folderOf(e.to) === 'metrics' && !['root', 'metrics'].includes(folderOf(e.from)));
    expect(show(bad)).toEqual([]);
  });

  it('when a component or worker uses a root file (src/*.ts), then only as a type (start-up never loops back into it)', () => {
    const bad = EDGES.filter((e) => folderOf(e.from) !== 'root' && folderOf(e.to) === 'root' && !e.typeOnly);
    expect(show(bad)).toEqual([]);
  });
});
