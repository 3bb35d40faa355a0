import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// patches/postgres+3.4.9.patch: postgres.js's Query (a Promise subclass made for every statement)
// had a default value in its constructor's parameter list (`options = {}`). With it, a busy process
// promoted megabytes of young objects at every scavenge that the next full collection found dead,
// and a customer create cost about a tenth more CPU (issue 28, docs/decisions.md). The patch takes
// the default out of the parameter list and sets the same value in the body.
interface QueryLike {
  options: Record<string, unknown>;
}
type QueryClass = (new (strings: readonly string[], args: unknown[], handler: () => void, canceller: () => void, options?: object) => QueryLike) & {
  length: number;
};

const builds = ['src', 'cjs/src', 'cf/src'] as const;
const load = async (dir: (typeof builds)[number]): Promise<QueryClass> => {
  const file = path.resolve('node_modules/postgres', dir, 'query.js');
  if (dir === 'cjs/src') return (createRequire(import.meta.url)(file) as { Query: QueryClass }).Query;
  return ((await import(pathToFileURL(file).href)) as { Query: QueryClass }).Query;
};
const noop = () => {};

describe.each(builds)('postgres.js Query (%s)', (dir) => {
  it('takes its five parameters without a default value in the list', async () => {
    const Query = await load(dir);
    // Function.length stops at the first parameter with a default: 4 unpatched, 5 patched.
    expect(Query.length).toBe(5);
  });

  it('when no options are given, then each query has an empty options object of its own', async () => {
    const Query = await load(dir);
    const a = new Query(['select 1'], [], noop, noop);
    const b = new Query(['select 1'], [], noop, noop);
    expect(a.options).toEqual({});
    expect(a.options).not.toBe(b.options);
    a.options.simple = true;
    expect(b.options).toEqual({});
  });

  it('when options are given, then the query keeps that very object', async () => {
    const Query = await load(dir);
    const options = { prepare: false, simple: true };
    expect(new Query(['select 1'], [], noop, noop, options).options).toBe(options);
  });
});
