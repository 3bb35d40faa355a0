import type { Response } from 'express';
import escapeText from 'escape-html';
import { endWhole, isConditional } from '../lib/http.ts';

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

/**
 * Sends a page: what `res.status(status).type('html').send(body)` sends, the same status, headers
 * (`Content-Type: text/html; charset=utf-8`, `Content-Length`) and bytes, in one `res.end`. Express's
 * send looks the type up through mime-types, parses and rewrites it to add the charset, checks the
 * request's freshness and copies a body of 1,000 characters or more into a Buffer (issue 28: about 6 µs
 * of a hosted page, which is always longer). A conditional request (If-None-Match, If-Modified-Since,
 * which Express may answer 304) is left to Express; otherwise it never answers 304 here, as the app
 * sets no ETag (`etag` is off, src/app.ts) and no page sets Last-Modified. A HEAD gets the headers only, as there.
 */
export function sendHtml(res: Response, status: number, body: string): void {
  if (isConditional(res.req)) {
    res.status(status).type('html').send(body);
    return;
  }
  endWhole(res.status(status), 'text/html; charset=utf-8', body);
}
