import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toCondition } from '../../src/search/fields.ts';
import { formatQuery, parseQuery, QUERY_MAX_CLAUSES, SearchSyntaxError, type SearchNode } from '../../src/search/parse.ts';

const errorOf = (q: string) => {
  try {
    parseQuery(q);
  } catch (err) {
    if (err instanceof SearchSyntaxError) return err;
    throw err;
  }
  throw new Error(`parsed: ${q}`);
};

// Trees the parser can produce: a flat and/or never holds a child of its own kind, leaves are clauses or text.
const value = fc.string({ minLength: 1, maxLength: 12 });
const field = fc.constantFrom('email', 'amount', 'status', 'created', 'last4', 'currency');
const leaf: fc.Arbitrary<SearchNode> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), value, position: fc.constant(0) }),
  fc.record({ kind: fc.constant('clause' as const), field, op: fc.constantFrom(':', '>', '>=', '<', '<=' as const), value, position: fc.constant(0), valuePosition: fc.constant(0) }),
  fc.record({ kind: fc.constant('clause' as const), field: fc.constant('metadata'), key: value, op: fc.constant(':' as const), value, position: fc.constant(0), valuePosition: fc.constant(0) }),
);
const tree: fc.Arbitrary<SearchNode> = fc.letrec<{ node: SearchNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ kind: fc.constant('and' as const), children: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('or' as const), children: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
  ),
})).node.map(flatten);

/** What the parser makes of nested and-in-and (it flattens) and leaves' positions (compared apart). */
function flatten(n: SearchNode): SearchNode {
  if (n.kind !== 'and' && n.kind !== 'or') return n;
  const children = n.children.map(flatten).flatMap((c) => (c.kind === n.kind ? c.children : [c]));
  return { kind: n.kind, children };
}
function withoutPositions(n: SearchNode): unknown {
  if (n.kind === 'and' || n.kind === 'or') return { kind: n.kind, children: n.children.map(withoutPositions) };
  const rest: Record<string, unknown> = { ...n };
  delete rest.position;
  delete rest.valuePosition;
  return rest;
}
const leaves = (n: SearchNode): number => (n.kind === 'and' || n.kind === 'or' ? n.children.reduce((a, c) => a + leaves(c), 0) : 1);
const depth = (n: SearchNode): number => (n.kind === 'and' || n.kind === 'or' ? 1 + Math.max(...n.children.map(depth)) : 0);

describe('search query parser', () => {
  it('when a query has the examples of the issue, then each becomes its clause', () => {
    expect(parseQuery('email:"ada@example.com"')).toMatchObject({ kind: 'clause', field: 'email', op: ':', value: 'ada@example.com' });
    expect(parseQuery('amount>=4000')).toMatchObject({ kind: 'clause', field: 'amount', op: '>=', value: '4000' });
    expect(parseQuery('metadata["order_id"]:"1042"')).toMatchObject({ kind: 'clause', field: 'metadata', key: 'order_id', value: '1042' });
    expect(parseQuery('ada last4:4242')).toMatchObject({ kind: 'and', children: [{ kind: 'text', value: 'ada' }, { kind: 'clause', field: 'last4' }] });
  });

  it('when AND and OR are mixed, then AND binds tighter and parentheses group', () => {
    expect(parseQuery('a1a OR b2b c3c')).toMatchObject({ kind: 'or', children: [{ kind: 'text', value: 'a1a' }, { kind: 'and' }] });
    expect(parseQuery('(a1a OR b2b) AND c3c')).toMatchObject({ kind: 'and', children: [{ kind: 'or' }, { kind: 'text', value: 'c3c' }] });
    // Lowercase and/or are words, not keywords.
    expect(parseQuery('ada or bob')).toMatchObject({ kind: 'and', children: [{ value: 'ada' }, { value: 'or' }, { value: 'bob' }] });
  });

  it.each([
    ['', 0, 'empty'],
    ['email:', 6, 'a value'],
    ['amount>=', 8, 'a value'],
    ['(ada', 4, '")"'],
    ['ada)', 3, 'AND, OR or the end'],
    ['ada AND', 7, 'a clause'],
    ['OR ada', 0, 'a clause'],
    ['email:"ada', 6, 'not closed'],
    ['amount=4000', 6, '"=" is not an operator'],
    ['metadata[order_id]:1', 9, 'a quoted key'],
    ['metadata["k"]1', 13, '":" after the key'],
    ['Email:x', 0, 'not a field name'],
    ['"a\\x"', 2, 'backslash'],
  ])('when the query is %j, then the error is at position %i', (q, position, message) => {
    const err = errorOf(q);
    expect(err.position).toBe(position);
    expect(err.message).toContain(message);
  });

  it('when a query has too many clauses or nests too deep, then it is refused', () => {
    expect(errorOf(Array.from({ length: QUERY_MAX_CLAUSES + 1 }, (_, i) => `w${i}xx`).join(' ')).message).toContain('at most');
    expect(errorOf(`${'('.repeat(20)}ada${')'.repeat(20)}`).message).toContain('nest');
  });

  it('when any tree is written and read back, then the same tree comes out', () => {
    fc.assert(
      fc.property(
        tree.filter((t) => leaves(t) <= QUERY_MAX_CLAUSES && depth(t) < 8),
        (t) => {
          expect(withoutPositions(parseQuery(formatQuery(t)))).toEqual(withoutPositions(t));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('when any string is parsed, then it is a tree or a syntax error with a position inside the query', () => {
    const alphabet = fc.constantFrom(...'ab1 :<>="\\()[]ANDOR_-@.'.split(''));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 40 }).map((a) => a.join('')), (q) => {
        try {
          parseQuery(q);
        } catch (err) {
          expect(err).toBeInstanceOf(SearchSyntaxError);
          const p = (err as SearchSyntaxError).position;
          expect(p).toBeGreaterThanOrEqual(0);
          expect(p).toBeLessThanOrEqual(q.length);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('when positions are reported, then each points at its token in the query', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{3,6}$/), { minLength: 1, maxLength: 6 }), fc.array(fc.constantFrom(' ', '  ', '\t'), { minLength: 6, maxLength: 6 }), (words, gaps) => {
        const q = words.map((w, i) => `${gaps[i]}${w}`).join('');
        const t = parseQuery(q);
        const items = t.kind === 'and' ? t.children : [t];
        for (const item of items) {
          if (item.kind !== 'text') throw new Error('text expected');
          expect(q.slice(item.position, item.position + item.value.length)).toBe(item.value);
        }
      }),
    );
  });
});

describe('search fields', () => {
  const check = (resource: Parameters<typeof toCondition>[0], q: string) => toCondition(resource, parseQuery(q));
  const failure = (resource: Parameters<typeof toCondition>[0], q: string) => {
    try {
      check(resource, q);
    } catch (err) {
      return err as SearchSyntaxError;
    }
    throw new Error('accepted');
  };

  it('when values are typed, then they are normalised for their index', () => {
    expect(check('payments', 'status:succeeded')).toEqual({ kind: 'enum', field: 'status', value: 'SUCCEEDED' });
    expect(check('payments', 'email:"Ada@Example.com"')).toEqual({ kind: 'email', field: 'email', value: 'ada@example.com' });
    expect(check('payments', 'created>1767225600')).toEqual({ kind: 'time', field: 'created', op: '>', value: new Date(1767225600_000) });
    expect(check('invoices', 'total<=500')).toEqual({ kind: 'amount', field: 'total', op: '<=', value: 500 });
  });

  it.each([
    ['payments', 'colour:red', 0, 'Unknown field'],
    ['payments', 'amount>=forty', 8, 'whole number'],
    ['payments', 'status:"DONE"', 7, 'one of'],
    ['payments', 'last4:42', 6, 'four digits'],
    ['payments', 'status>1', 0, '":" only'],
    ['payments', 'ab', 0, 'at least 3'],
    ['payments', 'metadata:"x"', 0, 'takes a key'],
    ['customers', 'last4:4242', 0, 'Unknown field'],
    ['invoices', 'customer:bob', 9, 'cus_'],
    ['checkout-sessions', 'email:ada', 6, 'whole email'],
  ] as const)('when %s is searched with %j, then the error is at position %i', (resource, q, position, message) => {
    const err = failure(resource, q);
    expect(err).toBeInstanceOf(SearchSyntaxError);
    expect(err.position).toBe(position);
    expect(err.message).toContain(message);
  });
});
