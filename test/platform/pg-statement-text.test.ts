import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';

// patches/postgres+3.4.9.patch, plainStatement and signatureOf: a statement of plain values (no
// helper, identifier or fragment with values of its own; fragments without values are part of its
// text) gets its text made once per call site and set of such fragments, and its signature once
// per set of types, instead of both joined, flattened and hashed again for every query. The
// answers must stay those of the unpatched module.
// The server's own database: these tests make no tables.
const server = new URL(inject('databaseUrl'));
server.pathname = '/postgres';
const url = server.toString();

interface Debugged {
  text: string;
  params: unknown[];
}

/** A pool of one connection that records each statement's text and values as postgres.js sends them. */
function recorded() {
  const seen: Debugged[] = [];
  // Only the test's own statements (' as x' or ' as n'), not those postgres.js runs when it connects.
  const sql = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, text, params) => void (/ as [nx]\b/.test(text) && seen.push({ text, params })) });
  return { sql, seen };
}

describe('statement texts made once per call site (patched)', () => {
  it('when one call site runs with different values, then each query gets its own values and the same text', async () => {
    const { sql, seen } = recorded();
    const one = (n: number, s: string) => sql<{ n: number; s: string; b: boolean }[]>`select ${n}::int as n, ${s}::text as s, ${n > 1} as b`;
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push((await one(i, `v${i}`))[0]);
      expect(answers).toEqual([
        { n: 0, s: 'v0', b: false },
        { n: 1, s: 'v1', b: false },
        { n: 2, s: 'v2', b: true },
      ]);
      expect(seen.map((d) => d.text)).toEqual(Array(3).fill('select $1::int as n, $2::text as s, $3 as b'));
      // As sent: serialized by the values' types.
      expect(seen.map((d) => d.params)).toEqual([
        ['0', 'v0', 'f'],
        ['1', 'v1', 'f'],
        ['2', 'v2', 't'],
      ]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when a call site gets a fragment, an identifier or a value, then each text is the right one', async () => {
    const { sql, seen } = recorded();
    const pick = (v: unknown) => sql<{ x: string }[]>`select (${v as never})::text as x from (select 'from the column' as col) t`;
    try {
      expect((await pick('plain'))[0]!.x).toBe('plain');
      expect((await pick(sql`${'in a fragment'}::text || ${'!'}`))[0]!.x).toBe('in a fragment!');
      expect((await pick(sql('col')))[0]!.x).toBe('from the column');
      expect((await pick('plain again'))[0]!.x).toBe('plain again');
      const from = " from (select 'from the column' as col) t";
      expect(seen.map((d) => d.text)).toEqual([
        `select ($1)::text as x${from}`,
        `select ($1::text || $2)::text as x${from}`,
        `select ("col")::text as x${from}`,
        `select ($1)::text as x${from}`,
      ]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when a call site gets fragments without values made once, in turns, then each statement has its own text and values', async () => {
    const { sql, seen } = recorded();
    // As src/lib/fragments.ts makes them: once per pool, reused by every statement.
    const none = sql``;
    const evenOnly = sql`and n % 2 = 0`;
    const count = (below: number, filter: typeof none) => sql<{ x: number }[]>`select count(*)::int as x from generate_series(1, ${below}) n where true ${filter}`;
    try {
      const answers = [];
      for (const [below, filter] of [[10, none], [10, evenOnly], [7, none], [7, evenOnly]] as const) answers.push((await count(below, filter))[0]!.x);
      expect(answers).toEqual([10, 5, 7, 3]);
      const text = (f: string) => `select count(*)::int as x from generate_series(1, $1) n where true ${f}`;
      expect(seen.map((d) => d.text)).toEqual([text(''), text('and n % 2 = 0'), text(''), text('and n % 2 = 0')]);
      // A fragment with values of its own is written out as before, its values numbered after the statement's.
      expect((await count(10, sql`and n > ${8}`))[0]!.x).toBe(2);
      expect(seen.at(-1)).toEqual({ text: text('and n > $2'), params: ['10', '8'] });
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when the values of one call site change type, then each set of types gets its own prepared statement', async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {}, types: { int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (x: string) => Number(x) } } });
    // The parameter's type is the value's (a timestamptz, a boolean, unknown for a string): a
    // statement prepared for one type and used for another would answer wrong or fail.
    const typed = (v: unknown) => sql<{ v: string }[]>`select ${v as never}::text as v`;
    try {
      const answers = [];
      for (const v of [new Date('2026-01-02T03:04:05Z'), true, 'text', new Date('2026-01-02T03:04:05Z'), false, 'again']) answers.push((await typed(v))[0]!.v);
      expect(answers[0]).toMatch(/^2026-01-02 03:04:05/);
      expect(answers.slice(1)).toEqual(['true', 'text', answers[0], 'false', 'again']);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when 400 queries of one call site run at once on a pool of 4, then each gets its own answer', async () => {
    // Each connection prepares the statement for itself; the text and signature are shared.
    const sql = postgres(url, { max: 4, onnotice: () => {} });
    const echo = (i: number, v: unknown) => sql<{ i: number; v: string }[]>`select ${i}::int as i, ${v as never}::text as v`;
    try {
      const values = Array.from({ length: 400 }, (_, i) => (i % 3 === 0 ? `s${i}` : i % 3 === 1 ? i % 2 === 0 : new Date(Date.UTC(2026, 0, 1 + (i % 28)))));
      const answers = await Promise.all(values.map((v, i) => echo(i, v)));
      for (const [i, [row]] of answers.entries()) {
        expect(row!.i).toBe(i);
        const v = values[i];
        if (typeof v === 'string') expect(row!.v).toBe(v);
        else if (typeof v === 'boolean') expect(row!.v).toBe(String(v));
        else expect(row!.v).toMatch(new RegExp(`^2026-01-${String(v!.getUTCDate()).padStart(2, '0')} 00:00:00`));
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when a value is undefined, then the query fails as before, naming it', async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await expect(sql`select ${undefined as unknown as string} as x`).rejects.toThrow(/Undefined values are not allowed/);
      expect((await sql`select ${1}::int as x`)[0]!.x).toBe(1);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it.each(['src', 'cjs/src', 'cf/src'])('the %s build carries the patch', async (dir) => {
    const file = path.resolve('node_modules/postgres', dir, 'types.js');
    const types = (dir === 'cjs/src' ? createRequire(import.meta.url)(file) : await import(pathToFileURL(file).href)) as { plainStatement?: unknown };
    expect(typeof types.plainStatement).toBe('function');
  });
});
