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
export const escapeHtml = (s: string): string => escapeText(s.toWellFormed().replaceAll('\u0000', '\uFFFD'));

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is trusted as is (never anything a user or merchant typed). */
export const raw = (s: string): Html => new Html(s);
