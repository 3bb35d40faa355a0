/**
 * The search query language (issue 27, point 1; docs/search.md), parsed by hand: pure, no I/O,
 * no database. A query is clauses combined with AND and OR (AND binds tighter; two clauses side by
 * side mean AND; parentheses group):
 *
 *   email:"ada@example.com" AND amount>=4000
 *   status:"SUCCEEDED" OR status:"FAILED"
 *   metadata["order_id"]:"1042" last4:4242
 *   ada (created>1767225600 OR status:"FAILED")
 *
 * A clause is `field op value` (op one of `:` `>` `>=` `<` `<=`), `metadata["key"]:value`, or a
 * bare word or quoted string: free text. Values are a quoted string (`\"` and `\\` escape) or a
 * bare word (no space, quote, parenthesis, bracket, colon or comparison sign). `AND` and `OR` are
 * keywords only in capitals; quote them to search for the words. Which fields exist and what their
 * values must be is checked later, per resource (fields.ts): the parser knows only the syntax.
 *
 * Every error carries the position (0-based, in characters) of the token at fault, so the API can
 * answer a 400 naming it.
 */

export type Op = ':' | '>' | '>=' | '<' | '<=';

export type SearchNode =
  | { kind: 'and'; children: SearchNode[] }
  | { kind: 'or'; children: SearchNode[] }
  /** `field op value`; `key` is set for `metadata["key"]:value`. */
  | { kind: 'clause'; field: string; key?: string; op: Op; value: string; position: number; valuePosition: number }
  /** A bare word or quoted string: free text over the resource's names and emails. */
  | { kind: 'text'; value: string; position: number };

/** A query that cannot be read: `position` is where (0-based), `message` says what was expected. */
export class SearchSyntaxError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.position = position;
  }
}

/** Bounds that keep one query cheap to parse and to plan. */
export const QUERY_MAX_LENGTH = 1000;
export const QUERY_MAX_CLAUSES = 20;
export const QUERY_MAX_DEPTH = 8;

type TokenKind = 'word' | 'string' | 'op' | '(' | ')' | '[' | ']' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  position: number;
}

const SPECIAL = new Set(['(', ')', '[', ']', ':', '<', '>', '=', '"']);
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

export function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ kind: c, text: c, position: start });
      i++;
    } else if (c === ':') {
      tokens.push({ kind: 'op', text: ':', position: start });
      i++;
    } else if (c === '<' || c === '>') {
      const op = input[i + 1] === '=' ? `${c}=` : c;
      tokens.push({ kind: 'op', text: op, position: start });
      i += op.length;
    } else if (c === '=') {
      throw new SearchSyntaxError('"=" is not an operator: use ":" for equality (email:"ada@example.com"), or >= and <=.', start);
    } else if (c === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= input.length) throw new SearchSyntaxError('A quoted string is not closed: add the closing ".', start);
        const d = input[i]!;
        if (d === '\\') {
          const next = input[i + 1];
          if (next !== '"' && next !== '\\') throw new SearchSyntaxError('Only \\" and \\\\ may follow a backslash in a quoted string.', i);
          value += next;
          i += 2;
        } else if (d === '"') {
          i++;
          break;
        } else {
          value += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', text: value, position: start });
    } else {
      while (i < input.length && !isSpace(input[i]!) && !SPECIAL.has(input[i]!)) i++;
      tokens.push({ kind: 'word', text: input.slice(start, i), position: start });
    }
  }
  tokens.push({ kind: 'end', text: '', position: input.length });
  return tokens;
}

const describe = (t: Token) => (t.kind === 'end' ? 'the end of the query' : `"${t.kind === 'string' ? `"${t.text}"` : t.text}"`);
const isKeyword = (t: Token, k: 'AND' | 'OR') => t.kind === 'word' && t.text === k;
const FIELD = /^[a-z][a-z0-9_]*$/;

/** Parses a query into its tree; throws SearchSyntaxError naming the position of the first error. */
export function parseQuery(input: string): SearchNode {
  if (input.length > QUERY_MAX_LENGTH) throw new SearchSyntaxError(`A query has at most ${QUERY_MAX_LENGTH} characters.`, QUERY_MAX_LENGTH);
  const tokens = tokenize(input);
  let at = 0;
  let clauses = 0;
  const peek = () => tokens[at]!;
  const next = () => tokens[at++]!;
  const expected = (what: string, t: Token): never => {
    throw new SearchSyntaxError(`Expected ${what} at position ${t.position}, found ${describe(t)}.`, t.position);
  };

  const value = (): { value: string; position: number } => {
    const t = next();
    if (t.kind === 'string' || (t.kind === 'word' && t.text !== 'AND' && t.text !== 'OR')) return { value: t.text, position: t.position };
    return expected('a value (a word or a quoted string)', t);
  };

  const counted = () => {
    if (++clauses > QUERY_MAX_CLAUSES) throw new SearchSyntaxError(`A query has at most ${QUERY_MAX_CLAUSES} clauses.`, peek().position);
  };

  const clause = (depth: number): SearchNode => {
    const t = peek();
    if (t.kind === '(') {
      if (depth >= QUERY_MAX_DEPTH) throw new SearchSyntaxError(`Parentheses nest at most ${QUERY_MAX_DEPTH} deep.`, t.position);
      next();
      const inner = or(depth + 1);
      if (peek().kind !== ')') expected('")"', peek());
      next();
      return inner;
    }
    if (t.kind === 'string') {
      next();
      counted();
      return { kind: 'text', value: t.text, position: t.position };
    }
    if (t.kind !== 'word' || isKeyword(t, 'AND') || isKeyword(t, 'OR')) return expected('a clause (field:value, a word or a quoted string)', t);
    next();
    const after = peek();
    if (after.kind !== 'op' && after.kind !== '[') {
      counted();
      return { kind: 'text', value: t.text, position: t.position };
    }
    if (!FIELD.test(t.text)) throw new SearchSyntaxError(`"${t.text}" is not a field name (lowercase letters, digits and _).`, t.position);
    counted();
    let key: string | undefined;
    if (after.kind === '[') {
      next();
      const k = next();
      if (k.kind !== 'string') expected('a quoted key, as in metadata["order_id"]', k);
      key = k.text;
      if (peek().kind !== ']') expected('"]"', peek());
      next();
      if (peek().kind !== 'op') expected('":" after the key', peek());
    }
    const op = next().text as Op;
    const v = value();
    return { kind: 'clause', field: t.text, ...(key !== undefined ? { key } : {}), op, value: v.value, position: t.position, valuePosition: v.position };
  };

  const and = (depth: number): SearchNode => {
    const children = [clause(depth)];
    for (;;) {
      const t = peek();
      if (isKeyword(t, 'AND')) {
        next();
        children.push(clause(depth));
      } else if (t.kind === 'end' || t.kind === ')' || isKeyword(t, 'OR')) {
        break;
      } else {
        children.push(clause(depth));
      }
    }
    return children.length === 1 ? children[0]! : { kind: 'and', children };
  };

  const or = (depth: number): SearchNode => {
    const children = [and(depth)];
    while (isKeyword(peek(), 'OR')) {
      next();
      children.push(and(depth));
    }
    return children.length === 1 ? children[0]! : { kind: 'or', children };
  };

  if (peek().kind === 'end') throw new SearchSyntaxError('The query is empty: give at least one clause.', 0);
  const tree = or(0);
  if (peek().kind !== 'end') expected('AND, OR or the end of the query', peek());
  return tree;
}

/** Writes a tree back as a query that parses to the same tree (the property tests' round trip). */
export function formatQuery(node: SearchNode): string {
  const quote = (v: string) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  switch (node.kind) {
    case 'text':
      return quote(node.value);
    case 'clause':
      return `${node.field}${node.key !== undefined ? `[${quote(node.key)}]` : ''}${node.op}${quote(node.value)}`;
    case 'and':
      return node.children.map((c) => (c.kind === 'or' ? `(${formatQuery(c)})` : formatQuery(c))).join(' AND ');
    case 'or':
      return node.children.map((c) => (c.kind === 'and' || c.kind === 'or' ? `(${formatQuery(c)})` : formatQuery(c))).join(' OR ');
  }
}
