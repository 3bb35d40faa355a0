/**
 * Reading the README as a script (issue 22, point 4): its fenced code blocks in order, each shell
 * block cut into commands with the answers shown under them, and the matching rule those answers
 * follow. Pure: test/platform/readme.test.ts runs what this reads; readme.unit.test.ts checks it.
 *
 * The rule, as README.md states it ("How the examples are checked"):
 * - every code block runs, in order, in one bash shell; `<!-- readme-test: skip: why -->` before a
 *   block leaves it out, `<!-- readme-test: background -->` runs it in the background with its
 *   output kept apart, `<!-- readme-test: same as <file> -->` says the block is that file, verbatim;
 * - comment lines right under a command (no blank line between) show its answer (stdout): JSON
 *   when it starts with `{` or `[`, else lines of text; `…` stands for anything (a value, members
 *   of an object, elements of an array, characters of a string or a line); an object shown without
 *   `…` has exactly those members; `localhost:3000` and `localhost:4000` stand for the ports the
 *   service and the receiver were given (PORT, RECEIVER_PORT); a last line `(exit N)` is the
 *   expected exit status (else 0);
 * - a command without a shown answer must exit 0 and must not answer an API error;
 * - a block without a language shows lines that the background processes print (each line in
 *   order of the block, found in their output, as they come; whitespace runs are alike).
 */

export type Marker = { kind: 'skip'; why: string } | { kind: 'background' } | { kind: 'file'; path: string } | null;

export interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  marker: Marker;
}

const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->$/;

/** The fenced code blocks of a Markdown text, in order, with the marker comment right above each. */
export function readBlocks(md: string): Block[] {
  const lines = md.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`README.md:${start + 1}: a code block is never closed`);
    const above = MARKER.exec(lines[start - 1]?.trim() ?? '');
    blocks.push({ line: start + 1, lang: open[1]!, text: body.join('\n'), marker: above ? markerOf(above[1]!, start + 1) : null });
  }
  return blocks;
}

function markerOf(text: string, line: number): Marker {
  if (text === 'background') return { kind: 'background' };
  const skip = /^skip:\s*(.+)$/.exec(text);
  if (skip) return { kind: 'skip', why: skip[1]! };
  const file = /^same as (\S+)$/.exec(text);
  if (file) return { kind: 'file', path: file[1]! };
  throw new Error(`README.md:${line}: unknown readme-test marker "${text}"`);
}

export interface Command {
  /** 1-based line in the README. */
  line: number;
  text: string;
  /** The answer shown under it, `# ` taken off each line; null when none is shown. */
  answer: string[] | null;
}

/**
 * Cuts a shell block into commands: a command ends at a line end outside quotes and `$( )`, unless
 * the line ends with `\`, `|`, `&&` or `||`. Comment lines right under a command are its answer;
 * other comment lines and blank lines are nobody's.
 */
export function readCommands(block: Block): Command[] {
  const lines = block.text.split('\n');
  const commands: Command[] = [];
  let current: { line: number; lines: string[] } | null = null;
  let stack: Context[] = [];
  let last: Command | null = null; // the command an answer line would belong to
  for (const [i, raw] of lines.entries()) {
    const at = block.line + 1 + i;
    if (!current) {
      const trimmed = raw.trim();
      if (trimmed === '') {
        last = null;
        continue;
      }
      if (trimmed.startsWith('#')) {
        if (last) (last.answer ??= []).push(trimmed.replace(/^# ?/, ''));
        continue;
      }
      current = { line: at, lines: [] };
      stack = [];
    }
    current.lines.push(raw);
    const code = scan(raw, stack);
    const continues = stack.length > 0 || /(\\|\||&&)\s*$/.test(code);
    if (!continues) {
      last = { line: current.line, text: current.lines.join('\n'), answer: null };
      commands.push(last);
      current = null;
    }
  }
  if (current) throw new Error(`README.md:${current.line}: a command is never ended (a quote or a parenthesis left open)`);
  return commands;
}

/** Where the scanner is: inside single quotes, double quotes, or `( )` / `$( )`. */
type Context = "'" | '"' | '(';

/**
 * Walks one line, updating the stack of open quotes and parentheses (a `"` inside `$( )` inside
 * `"…"` opens a new string, as in bash); answers the line without a trailing comment.
 */
function scan(line: string, stack: Context[]): string {
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    const top = stack.at(-1);
    if (top === "'") {
      if (c === "'") stack.pop();
      continue;
    }
    if (c === '\\') {
      i++;
      continue;
    }
    if (top === '"') {
      if (c === '"') stack.pop();
      else if (c === '$' && line[i + 1] === '(') {
        stack.push('(');
        i++;
      }
      continue;
    }
    if (c === "'" || c === '"' || c === '(') stack.push(c);
    else if (c === ')' && top === '(') stack.pop();
    else if (c === '#' && stack.length === 0 && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

// ---- The shown answers

export type Pattern =
  | { kind: 'any' }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'object'; members: Array<[string, Pattern]>; open: boolean }
  | { kind: 'array'; items: Array<Pattern | 'rest'> };

const ELLIPSIS = '…';

type Token = { t: 'punct'; v: string } | { t: 'ellipsis' } | { t: 'value'; v: string | number | boolean | null };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if ('{}[]:,'.includes(c) || c === ELLIPSIS) {
      out.push(c === ELLIPSIS ? { t: 'ellipsis' } : { t: 'punct', v: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out.push({ t: 'value', v: JSON.parse(text.slice(i, j + 1)) as string });
      i = j + 1;
    } else {
      const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i));
      if (!m) throw new Error(`cannot read the shown answer at "${text.slice(i, i + 30)}"`);
      out.push({ t: 'value', v: JSON.parse(m[0]) as number | boolean | null });
      i += m[0].length;
    }
  }
  return out;
}

/** Reads a shown JSON answer, `…` and all. */
export function readPattern(text: string): Pattern {
  const tokens = tokenize(text);
  let i = 0;
  const peek = () => tokens[i];
  const punct = (v: string) => {
    const tok = tokens[i++];
    if (!tok || tok.t !== 'punct' || tok.v !== v) throw new Error(`expected "${v}" in the shown answer: ${text}`);
  };
  const isPunct = (v: string) => {
    const tok = peek();
    return tok?.t === 'punct' && tok.v === v;
  };
  const value = (): Pattern => {
    const tok = tokens[i];
    if (!tok) throw new Error(`the shown answer ends early: ${text}`);
    if (tok.t === 'ellipsis') return (i++, { kind: 'any' });
    if (tok.t === 'value') return (i++, { kind: 'literal', value: tok.v });
    if (tok.v === '{') {
      i++;
      const members: Array<[string, Pattern]> = [];
      let open = false;
      while (!isPunct('}')) {
        const t2 = tokens[i];
        if (t2?.t === 'ellipsis') {
          open = true;
          i++;
        } else if (t2?.t === 'value' && typeof t2.v === 'string') {
          i++;
          punct(':');
          members.push([t2.v, value()]);
        } else throw new Error(`expected a member in the shown answer: ${text}`);
        if (isPunct(',')) i++;
      }
      punct('}');
      return { kind: 'object', members, open };
    }
    if (tok.v === '[') {
      i++;
      const items: Array<Pattern | 'rest'> = [];
      while (!isPunct(']')) {
        if (peek()?.t === 'ellipsis' && (tokens[i + 1]?.t === 'punct' && [',', ']'].includes((tokens[i + 1] as { v: string }).v))) {
          i++;
          items.push('rest');
        } else items.push(value());
        if (isPunct(',')) i++;
      }
      punct(']');
      return { kind: 'array', items };
    }
    throw new Error(`unexpected "${tok.v}" in the shown answer: ${text}`);
  };
  const p = value();
  if (i !== tokens.length) throw new Error(`the shown answer goes on after its value: ${text}`);
  return p;
}

/** `…` in a shown string stands for any characters; with `spaces`, a run of spaces stands for any run. */
export function globMatches(shown: string, actual: string, spaces = false): boolean {
  const parts = shown.split(ELLIPSIS).map((p) => {
    const escaped = p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return spaces ? escaped.replace(/\s+/g, '\\s+') : escaped;
  });
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`).test(actual);
}

/** Where `actual` differs from the pattern, as a path and a reason; null when it matches. */
export function mismatch(p: Pattern, actual: unknown, path = '$'): string | null {
  switch (p.kind) {
    case 'any':
      return null;
    case 'literal':
      if (typeof p.value === 'string' && p.value.includes(ELLIPSIS)) {
        return typeof actual === 'string' && globMatches(p.value, actual) ? null : `${path}: ${JSON.stringify(actual)} does not match ${JSON.stringify(p.value)}`;
      }
      return actual === p.value ? null : `${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(p.value)}`;
    case 'object': {
      if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an object`;
      const obj = actual as Record<string, unknown>;
      for (const [k, v] of p.members) {
        if (!Object.hasOwn(obj, k)) return `${path}.${k}: missing`;
        const m = mismatch(v, obj[k], `${path}.${k}`);
        if (m) return m;
      }
      if (!p.open) {
        const extra = Object.keys(obj).filter((k) => !p.members.some(([m]) => m === k));
        if (extra.length) return `${path}: members not shown: ${extra.join(', ')} (show them, or add …)`;
      }
      return null;
    }
    case 'array': {
      if (!Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an array`;
      return arrayMismatch(p.items, actual, 0, 0, path);
    }
  }
}

function arrayMismatch(items: Array<Pattern | 'rest'>, actual: unknown[], pi: number, ai: number, path: string): string | null {
  if (pi === items.length) return ai === actual.length ? null : `${path}: ${actual.length - ai} more element(s) than shown (add …)`;
  const item = items[pi]!;
  if (item === 'rest') {
    for (let k = ai; k <= actual.length; k++) if (!arrayMismatch(items, actual, pi + 1, k, path)) return null;
    return `${path}: no way to match the elements after …`;
  }
  if (ai >= actual.length) return `${path}[${ai}]: missing`;
  return mismatch(item, actual[ai], `${path}[${ai}]`) ?? arrayMismatch(items, actual, pi + 1, ai + 1, path);
}

/** `localhost:3000` and `localhost:4000` of a shown line, with the ports in use (`ports`: { 3000: PORT, 4000: RECEIVER_PORT }). */
export const withPorts = (line: string, ports: Record<string, string>): string =>
  line.replace(/localhost:(3000|4000)\b/g, (_m, p: string) => `localhost:${ports[p] ?? p}`);

export interface ShownAnswer {
  kind: 'json' | 'text';
  /** The answer with the ports put in, for messages. */
  text: string;
  exit: number;
  matches(stdout: string): string | null;
}

/**
 * The answer shown under a command, with the documented ports replaced by the ones in use
 * (`ports`: { 3000: PORT, 4000: RECEIVER_PORT }).
 */
export function shownAnswer(lines: string[], ports: Record<string, string>): ShownAnswer {
  const body = [...lines];
  let exit = 0;
  const status = /^\(exit (\d+)\)$/.exec(body.at(-1)?.trim() ?? '');
  if (status) {
    exit = Number(status[1]);
    body.pop();
  }
  const shown = body.map((l) => withPorts(l, ports));
  const first = shown[0]?.trim() ?? '';
  if (first.startsWith('{') || first.startsWith('[')) {
    const text = shown.map((l) => l.trim()).join(' ');
    const pattern = readPattern(text);
    return {
      kind: 'json',
      text,
      exit,
      matches(stdout) {
        let actual: unknown;
        try {
          actual = JSON.parse(stdout);
        } catch {
          return `the answer is not JSON: ${stdout.slice(0, 500)}`;
        }
        return mismatch(pattern, actual);
      },
    };
  }
  return {
    kind: 'text',
    text: shown.join('\n'),
    exit,
    matches(stdout) {
      const got = stdout.replace(/\n$/, '').split('\n');
      if (shown.length === 0) return stdout === '' ? null : `expected no output, got: ${stdout.slice(0, 500)}`;
      return textMismatch(shown, got);
    },
  };
}

/** Lines of text against shown lines: a shown line `…` alone stands for any number of lines. */
function textMismatch(shown: string[], got: string[]): string | null {
  const go = (si: number, gi: number): boolean => {
    if (si === shown.length) return gi === got.length;
    if (shown[si]!.trim() === ELLIPSIS) {
      for (let k = gi; k <= got.length; k++) if (go(si + 1, k)) return true;
      return false;
    }
    return gi < got.length && globMatches(shown[si]!.trim(), got[gi]!.trim(), true) && go(si + 1, gi + 1);
  };
  return go(0, 0) ? null : `the lines differ:\n--- shown\n${shown.join('\n')}\n--- got\n${got.join('\n')}`;
}

/** Whether `stdout` is an API error answer (`{"error":{…}}`), which a command must show to give. */
export function isApiError(stdout: string): boolean {
  try {
    const v = JSON.parse(stdout) as unknown;
    return !!v && typeof v === 'object' && 'error' in v;
  } catch {
    return false;
  }
}
