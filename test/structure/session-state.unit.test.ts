import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 23, point 4: behind PgBouncer in transaction mode a pooled connection is another server
// session at each transaction, so nothing in src/ or workers/ may leave state on a session: no
// session-level advisory lock, no SET (or set_config) that outlives its transaction, no LISTEN, no
// connection reserved outside a transaction. Transaction-scoped forms (pg_advisory_xact_lock,
// SET LOCAL, set_config(…, true)) are what the code uses instead.

const ROOT = join(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

const FORBIDDEN: Array<[string, RegExp]> = [
  ['session-level advisory lock', /pg_(try_)?advisory_lock(_shared)?\s*\(/i],
  ['SET outside a transaction (a statement starting with SET, not SET LOCAL)', /(`|unsafe\(\s*['"`])\s*set\s+(?!local\b)(session\s+)?[a-z_]+\s*(=|to\b)/i],
  ['set_config that outlives its transaction', /set_config\([^)]*,\s*false\s*\)/i],
  ['LISTEN (use a direct connection, never the pool)', /(`|unsafe\(\s*['"`])\s*(un)?listen\s|\.listen\(\s*['"`]/i],
  ['a connection reserved outside a transaction', /\.reserve\(\s*\)/],
];

describe('no session state on pooled connections', () => {
  it('when src/ and workers/ are read, then none of them sets session state that a transaction pooler would hand to the next client', () => {
    const found: string[] = [];
    for (const file of [...sources('src'), ...sources('workers')]) {
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [what, pattern] of FORBIDDEN) if (pattern.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('when the patterns meet the forms they exist for, then they catch them and let the transaction-scoped ones pass', () => {
    const caught = (line: string) => FORBIDDEN.some(([, p]) => p.test(line));
    for (const bad of ['await sql`select pg_advisory_lock(1)`', 'await sql`set statement_timeout = 0`', "sql.unsafe('set search_path to x')", "sql`select set_config('a', 'b', false)`", 'sql`listen events`', 'const c = await sql.reserve()']) {
      expect(caught(bad), bad).toBe(true);
    }
    for (const ok of ['await tx`select pg_advisory_xact_lock(1)`', 'await tx`set local statement_timeout = 0`', "tx`select set_config('statement_timeout', ${v}, true)`", 'sql`update invoices set status = ${s}`', 'await listenGracefully(app, port)']) {
      expect(caught(ok), ok).toBe(false);
    }
  });
});
