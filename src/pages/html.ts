import type { Response } from 'express';
import escapeText from 'escape-html';
import { randomBytes } from 'node:crypto';
import { setBounded } from '../lib/bounded.ts';
import { endWhole, isConditional, wholeBodyHeaders } from '../lib/http.ts';

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

/** A page rendered once around one per-request value (a form's CSRF token), kept as its bytes. */
export interface SlottedPage {
  head: Buffer;
  tail: Buffer;
}

/**
 * Pages rendered once per process and sent as bytes with one value filled in per request (issue 28:
 * a link page was rendered, joined and copied out of its pieces again on every load, about 15 of
 * the 56 KB it allocated per request). `get` renders with `slot` standing where the value goes, and keeps
 * the bytes before and after it; a page in which the slot is not found exactly once is not kept
 * (null: render it the ordinary way). The key must name everything the page is made from but the
 * value. At most `max` pages, the oldest dropped first.
 */
export class SlottedPages {
  /** What stands for the value while the page is rendered: no page text holds it (random per process). */
  readonly slot = `slot${randomBytes(12).toString('hex')}`;
  private readonly pages = new Map<string, SlottedPage | null>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  get(key: string, render: (slot: string) => string): SlottedPage | null {
    let page = this.pages.get(key);
    if (page !== undefined) return page;
    const text = render(this.slot);
    const at = text.indexOf(this.slot);
    const once = at >= 0 && text.indexOf(this.slot, at + this.slot.length) < 0;
    page = once ? { head: Buffer.from(text.slice(0, at), 'utf8'), tail: Buffer.from(text.slice(at + this.slot.length), 'utf8') } : null;
    setBounded(this.pages, this.max, key, page);
    return page;
  }
}

/**
 * Sends a slotted page with `value` in its slot: the bytes and headers sendHtml sends for the whole
 * text, written as three pieces in one write (the socket corked until the end), without joining them.
 */
export function sendSlotted(res: Response, status: number, page: SlottedPage, value: string): void {
  if (isConditional(res.req)) return sendHtml(res, status, page.head.toString('utf8') + value + page.tail.toString('utf8'));
  res.status(status);
  if (wholeBodyHeaders(res, 'text/html; charset=utf-8', page.head.length + Buffer.byteLength(value, 'utf8') + page.tail.length)) return void res.end();
  res.cork();
  res.write(page.head);
  res.write(value, 'utf8');
  res.end(page.tail);
}
