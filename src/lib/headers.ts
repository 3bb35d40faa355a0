import express from 'express';
import type { ServerResponse } from 'node:http';

/**
 * Headers given to a response when its head is written, not before (issue 28.2). Each
 * `res.setHeader` validates the name and value, lowercases the name and adds it to the response's
 * own header object, and the head's writing goes over them again: a hosted page's seventeen
 * headers (the request id, the security headers, the CSRF cookie, the type and length) cost 10.0 to
 * 10.7 µs that way in a microbenchmark (a ServerResponse without a socket), against 4.0 to 4.9 µs
 * when Node is handed them as one list in `writeHead(status, list)`, which it validates once and
 * writes as they are. Node takes that path only when no header was set the ordinary way; otherwise
 * the headers kept here are set then, before the head is written, and a header set the ordinary
 * way under the same name keeps its value (it was set after them: they are set early, by
 * requestContext and the pages' security middleware), Set-Cookie aside, which is added beside it.
 * The same headers, values and order either way.
 *
 * Kept under a symbol on the response. Names are compared without case. `writeHead` of Express's
 * response is wrapped the first time a header is kept (once per process, for every app): a
 * response that keeps none is written as before.
 */
const LATER = Symbol('laterHeaders');
/** The headers kept: [name, value, …] as they will be written, and each name lowercased, in the same order. */
interface Kept {
  flat: string[];
  lower: string[];
}
type Later = ServerResponse & { [LATER]?: Kept };

/** Names lowercased once each (they are the code's constants): the same string every time, compared at once. */
const lowered = new Map<string, string>();
function lowerOf(name: string): string {
  let lower = lowered.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowered.size < 200) lowered.set(name, lower);
  }
  return lower;
}

let wrapped = false;

/** Whether no header was set the ordinary way (`setHeader`): then a list handed to writeHead goes out as it is. */
const noneSetOrdinarily = (res: ServerResponse): boolean => res.getHeaderNames().length === 0;

function wrapWriteHead(): void {
  wrapped = true;
  const proto = express.response as unknown as ServerResponse;
  const writeHead = proto.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  proto.writeHead = function (this: Later, statusCode: number, ...rest: unknown[]) {
    const kept = this[LATER];
    if (kept === undefined || this.headersSent) return writeHead.call(this, statusCode, ...rest);
    this[LATER] = undefined;
    const { flat, lower } = kept;
    const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
    const given = reason === undefined ? rest[0] : rest[1];
    // Nothing set the ordinary way and nothing given here: Node writes the list as it is.
    if (given === undefined && noneSetOrdinarily(this)) {
      return reason === undefined ? writeHead.call(this, statusCode, flat) : writeHead.call(this, statusCode, reason, flat);
    }
    // Else the kept ones first (they were set first), then those set the ordinary way, which win
    // under the same name (Set-Cookie: both).
    // getRawHeaderNames: the names as they were set (Node has it since 15.13; @types/node lacks it).
    const names = (this as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames();
    const values = names.map((n) => this.getHeader(n) as string | string[]); // a number is written as its text
    const ordinary = new Set<string>();
    for (const n of names) {
      ordinary.add(lowerOf(n));
      this.removeHeader(n);
    }
    for (let i = 0; i < lower.length; i++) {
      if (lower[i] === 'set-cookie' || !ordinary.has(lower[i]!)) this.appendHeader(flat[2 * i]!, flat[2 * i + 1]!);
    }
    for (let i = 0; i < names.length; i++) this.appendHeader(names[i]!, values[i]!);
    return writeHead.call(this, statusCode, ...rest);
  } as typeof proto.writeHead;
}

/**
 * Sets a header to be written with the head, as `setHeader` would: over one set the ordinary way
 * (set again that way), else over one kept under that name, else kept. `add`: one more header of
 * that name beside the others (Set-Cookie).
 */
export function setLater(res: ServerResponse, name: string, value: string, add = false): void {
  if (!wrapped) wrapWriteHead();
  if (res.headersSent) return void res.setHeader(name, value); // too late: throws as setHeader does
  const r = res as Later;
  let kept = r[LATER];
  const lower = lowerOf(name);
  const at = add || kept === undefined ? -1 : kept.lower.indexOf(lower);
  if (!add && res.hasHeader(name)) {
    if (at >= 0) {
      kept!.flat.splice(2 * at, 2);
      kept!.lower.splice(at, 1);
    }
    res.setHeader(name, value);
    return;
  }
  if (at >= 0) {
    kept!.flat[2 * at + 1] = value;
    return;
  }
  if (kept === undefined) kept = r[LATER] = { flat: [], lower: [] };
  kept.flat.push(name, value);
  kept.lower.push(lower);
}

/** A header's value as it will be written: kept here, or set the ordinary way. */
export function headerOf(res: ServerResponse, name: string): string | undefined {
  const kept = (res as Later)[LATER];
  const at = kept === undefined ? -1 : kept.lower.indexOf(lowerOf(name));
  if (at >= 0) return kept!.flat[2 * at + 1];
  const v = res.getHeader(name);
  return v === undefined ? undefined : Array.isArray(v) ? v.join(', ') : String(v);
}

/**
 * A header set just before the head is written (a body's type and length): kept when nothing was
 * set the ordinary way, so that Node is handed the whole list; else set the ordinary way, after
 * those, where setHeader would have put it.
 */
export function setLast(res: ServerResponse, name: string, value: string): void {
  if (noneSetOrdinarily(res)) setLater(res, name, value);
  else res.setHeader(name, value);
}

/**
 * Headers of fixed names and values, kept as setLater keeps each (the pages' security headers):
 * made once by `fixedHeaders`, added to a response with one step per header.
 */
export interface FixedHeaders {
  flat: readonly string[];
  lower: readonly string[];
}

export function fixedHeaders(pairs: ReadonlyArray<readonly [string, string]>): FixedHeaders {
  const flat: string[] = [];
  const lower: string[] = [];
  for (const [name, value] of pairs) {
    const l = lowerOf(name);
    if (lower.includes(l)) throw new Error(`fixedHeaders: ${name} twice`);
    flat.push(name, value);
    lower.push(l);
  }
  return { flat, lower };
}

/** Keeps every header of `fixed`, each as setLater would. */
export function setLaterAll(res: ServerResponse, fixed: FixedHeaders): void {
  if (!wrapped) wrapWriteHead();
  if (res.headersSent) return void res.setHeader(fixed.flat[0]!, fixed.flat[1]!); // too late: throws as setHeader does
  const r = res as Later;
  const kept = r[LATER];
  // Nothing set yet under any of these names (the usual case: only the request id is kept): appended as they are.
  if (noneSetOrdinarily(res) && (kept === undefined || !kept.lower.some((l) => fixed.lower.includes(l)))) {
    if (kept === undefined) r[LATER] = { flat: [...fixed.flat], lower: [...fixed.lower] };
    else {
      for (let i = 0; i < fixed.flat.length; i++) kept.flat.push(fixed.flat[i]!);
      for (let i = 0; i < fixed.lower.length; i++) kept.lower.push(fixed.lower[i]!);
    }
    return;
  }
  for (let i = 0; i < fixed.lower.length; i++) setLater(res, fixed.flat[2 * i]!, fixed.flat[2 * i + 1]!);
}
