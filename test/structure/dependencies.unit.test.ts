import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The dependency rule of docs/architecture.md, read from the import statements of src/ and workers/
// (static, re-exports and dynamic import()), type-only imports included: a type import is a
// dependency of the code even though Node erases it.

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

function isTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // import './x.ts': run for its effects
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

/** The relative imports of each file, resolved to paths from the repository root. */
function importEdges(files: readonly string[]): Edge[] {
  const edges: Edge[] = [];
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
    const visit = (n: ts.Node): void => {
      let spec: string | undefined;
      let typeOnly = false;
      if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
        spec = n.moduleSpecifier.text;
        typeOnly = isTypeOnly(n.importClause);
      } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
        spec = n.moduleSpecifier.text;
        typeOnly = n.isTypeOnly;
      } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) {
        spec = n.arguments[0].text;
      }
      if (spec?.startsWith('.')) edges.push({ from: file, to: normalize(join(dirname(file), spec)).replaceAll('\\', '/'), typeOnly });
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return edges;
}

/** Shared infrastructure: used by every component, uses none. */
const BASE = new Set(['lib', 'db', 'queue']);

/** The folder a file belongs to: `workers`, a folder of src/, or `root` for src/*.ts (the composition root). */
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

describe('dependencies read from the imports of src/ and workers/', () => {
  it('when the imports are read, then they are found (the reader sees the tree)', () => {
    expect(FILES).toContain('src/app.ts');
    expect(EDGES.some((e) => e.from === 'src/app.ts' && e.to === 'src/services.ts' && e.typeOnly)).toBe(true);
    expect(cycles(new Map([['a', new Set(['b'])], ['b', new Set(['a'])]]))).toEqual([['a', 'b']]);
  });

  it('when the component folders and workers/ are drawn as a graph, then it has no cycle', () => {
    // The composition root (src/*.ts) may use everything and is handed out only as the Services
    // type; the base folders are checked below to use no component, so no cycle can pass through them.
    const adj = graph(EDGES, (f) => {
      const folder = folderOf(f);
      return folder === 'root' || BASE.has(folder) ? undefined : folder;
    });
    expect(cycles(adj)).toEqual([]);
  });

  it('when files import each other, then no file reaches itself again (type imports included, the Services type aside)', () => {
    // Every component receives `Services` from the composition root, which builds some of them:
    // that type-only edge is the one way back allowed.
    const adj = graph(
      EDGES.filter((e) => !(e.typeOnly && e.to === 'src/services.ts')),
      (f) => f,
    );
    expect(cycles(adj)).toEqual([]);
  });

  it('when events/ imports, then only lib/ and db/ (and the Services type), never a business component', () => {
    const bad = leaving('events').filter((e) => !['lib', 'db'].includes(folderOf(e.to)) && !(e.typeOnly && e.to === 'src/services.ts'));
    expect(show(bad)).toEqual([]);
  });

  it('when lib/ imports, then only lib/: it is the bottom layer (no component, no db/, no queue/)', () => {
    expect(show(leaving('lib'))).toEqual([]);
  });

  it('when the base folders (lib/, db/, queue/) are drawn as a graph, then it has no cycle', () => {
    const adj = graph(
      EDGES.filter((e) => !(e.typeOnly && e.to === 'src/services.ts')),
      (f) => (BASE.has(folderOf(f)) ? folderOf(f) : undefined),
    );
    expect(cycles(adj)).toEqual([]);
  });

  it('when db/ or queue/ import, then no component (only the Services type of the composition root)', () => {
    const bad = [...leaving('db'), ...leaving('queue')].filter((e) => !BASE.has(folderOf(e.to)) && !(e.typeOnly && e.to === 'src/services.ts'));
    expect(show(bad)).toEqual([]);
  });

  it('when anything uses openapi/, then only the composition root: the document is made from the components, which never read it', () => {
    const bad = EDGES.filter((e) => folderOf(e.to) === 'openapi' && !['root', 'openapi'].includes(folderOf(e.from)));
    expect(show(bad)).toEqual([]);
  });

  it('when a component or worker uses the composition root, then only as a type (start-up never loops back into it)', () => {
    const bad = EDGES.filter((e) => folderOf(e.from) !== 'root' && folderOf(e.to) === 'root' && !e.typeOnly);
    expect(show(bad)).toEqual([]);
  });
});
