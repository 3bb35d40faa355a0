import escapeText from 'escape-html';

/**
 * A tiny HTML template tag: every interpolated value is escaped unless it is itself `Html`
 * (the result of `html` or `raw`). Arrays are joined, null / undefined / false render nothing.
 */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

// NUL and unpaired surrogates become U+FFFD, so that a page is always well-formed UTF-8 text;
// escape-html then escapes & < > " ' (the same five entities the hand-written table had).
// Most values (amounts, dates, ids, names) hold none of these characters: they are returned as they
// are, without the three passes below (a reports page escapes some ten thousand values).
// eslint-disable-next-line no-control-regex -- NUL is one of the characters replaced
const NEEDS_WORK = /[&<>"'\u0000\uD800-\uDFFF]/;
export const escapeHtml = (s: string): string => (NEEDS_WORK.test(s) ? escapeText(s.toWellFormed().replaceAll('\u0000', '\uFFFD')) : s);

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  // A number's text has no character to escape.
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) {
    let out = '';
    for (const item of v as readonly Part[]) out += render(item);
    return out;
  }
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is trusted as is (never anything a user or merchant typed). */
export const raw = (s: string): Html => new Html(s);
