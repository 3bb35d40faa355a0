import { z } from 'zod';
import { setBounded } from './bounded.ts';
import { ApiError, resourceMissing } from './errors.ts';
import { isId, type IdPrefix } from './ids.ts';

/** `line_items[0][amount]`, the way Stripe names a nested parameter. */
export function paramName(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path.map(String);
  return (head ?? '') + rest.map((p) => `[${p}]`).join('');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function toApiError(issue: z.core.$ZodIssue, input: unknown, where: 'body' | 'query'): ApiError {
  if (issue.code === 'unrecognized_keys') {
    const name = paramName([...issue.path, issue.keys[0]!]);
    return new ApiError('parameter_unknown', `Received unknown parameter: ${name}`, name);
  }
  // A bad record key is reported on the record itself: the key is what is wrong, not a value under it.
  const path = issue.code === 'invalid_key' ? issue.path.slice(0, -1) : issue.path;
  const name = paramName(path);
  if (!name) {
    return new ApiError('parameter_invalid', `Invalid request ${where}: ${issue.message}`);
  }
  if (issue.code === 'invalid_type' && valueAt(input, path) === undefined) {
    return new ApiError('parameter_missing', `Missing required param: ${name}.`, name);
  }
  return new ApiError('parameter_invalid', `Invalid ${name}: ${issue.message}`, name);
}

export type TextProblem = 'nul' | 'surrogate';

/**
 * Text Postgres cannot store: U+0000 (text columns refuse it) and unpaired UTF-16 surrogates
 * (JSON.parse accepts the escape \ud800, jsonb refuses it). Such a string is refused up front,
 * on the API and on the hosted pages alike, naming where it was.
 */
export function textProblem(s: string): TextProblem | null {
  if (s.includes('\u0000')) return 'nul';
  return s.isWellFormed() ? null : 'surrogate';
}

export const TEXT_PROBLEM_MESSAGES: Record<TextProblem, string> = {
  nul: 'Strings may not contain the NUL character (U+0000).',
  surrogate: 'Strings must be valid Unicode: an unpaired UTF-16 surrogate (U+D800 to U+DFFF) is not allowed.',
};

interface Visit {
  value: unknown;
  key: string | undefined;
  parent: Visit | undefined;
  depth: number;
}

const pathOf = (v: Visit): string[] => {
  const path: string[] = [];
  for (let n: Visit | undefined = v; n?.key !== undefined; n = n.parent) path.push(n.key);
  return path.reverse();
};

/**
 * Walks a parsed body or query with an explicit stack (a recursive walk overflowed on deep input),
 * in document order. Stops at the first node for which `visit` answers true and returns its path.
 */
function walk(input: unknown, visit: (v: Visit) => boolean): string[] | null {
  const stack: Visit[] = [{ value: input, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length) {
    const node = stack.pop()!;
    if (visit(node)) return pathOf(node);
    const { value } = node;
    if (value === null || typeof value !== 'object') continue;
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      stack.push({ value: child, key, parent: node, depth: node.depth + 1 });
    }
  }
  return null;
}

/** The first string (key or value) Postgres cannot store, with its path; null when there is none. */
export function findBadText(input: unknown): { path: string[]; problem: TextProblem } | null {
  const found: { problem: TextProblem | null } = { problem: null };
  const path = walk(input, ({ key, value }) => {
    found.problem = (key !== undefined ? textProblem(key) : null) ?? (typeof value === 'string' ? textProblem(value) : null);
    return found.problem !== null;
  });
  return path && found.problem ? { path, problem: found.problem } : null;
}

/** How deep a JSON body may nest objects and arrays (the body itself is level 1). */
export const MAX_BODY_DEPTH = 32;

/** The largest Unix time accepted anywhere (9999-12-31T23:59:59Z): ISO 8601, Date and Postgres all hold it. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** A Unix timestamp in seconds, an integer between 0 and MAX_UNIX_SECONDS. */
export const unixSeconds = () =>
  z
    .number({ error: 'must be a Unix timestamp in seconds' })
    .int('must be a Unix timestamp in seconds')
    .min(0, 'must be a Unix timestamp in seconds')
    .max(MAX_UNIX_SECONDS, `must be at most ${MAX_UNIX_SECONDS} (9999-12-31T23:59:59Z)`);

/**
 * The path of the first object or array nested deeper than `max` (the top-level body is depth 1);
 * null when the input stays within it. Iterative, and it stops at the first node too deep.
 */
export function findTooDeep(input: unknown, max: number): string[] | null {
  return walk(input, ({ value, depth }) => value !== null && typeof value === 'object' && depth >= max);
}

/**
 * Marks a JSON body parsed from text without a `\u` escape (src/lib/http.ts). None of its strings
 * can hold NUL or an unpaired surrogate: JSON refuses raw control characters, and the UTF-8 decoder
 * turns bytes that are not UTF-8 into U+FFFD. validate() then skips findBadText's walk (issue 28).
 * A symbol key: zod, Object.keys, for-in and JSON.stringify do not see it.
 */
const PLAIN_TEXT = Symbol('plainText');
export function markPlainText(body: object): void {
  (body as Record<symbol, boolean>)[PLAIN_TEXT] = true;
}
const isPlainText = (input: unknown): boolean => typeof input === 'object' && input !== null && (input as Record<symbol, unknown>)[PLAIN_TEXT] === true;

/** Parses a request body or query with a zod schema; the first problem becomes a 400 naming its parameter. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, where: 'body' | 'query' = 'body'): z.output<S> {
  const bad = isPlainText(input) ? null : findBadText(input);
  if (bad) throw new ApiError('parameter_invalid', TEXT_PROBLEM_MESSAGES[bad.problem], paramName(bad.path) || undefined);
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  // An unknown field is named first: `amount_cents` in place of `amount` is a 400 parameter_unknown, not a missing amount.
  const issues = result.error.issues;
  throw toApiError(issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!, input, where);
}

/** Strict object: unknown fields are refused with `parameter_unknown`. */
export const strictObject = z.strictObject;

const METADATA_MAX_PAIRS = 20;

/**
 * metadata on write: up to 20 pairs, keys up to 40 characters, string values up to 500.
 * A value of "" or null removes that key on update (Stripe's rule).
 */
export const metadataSchema = z
  .record(
    z.string().min(1, 'metadata keys must not be empty').max(40, 'metadata keys are at most 40 characters').regex(/^[^[\]]+$/, 'metadata keys may not contain square brackets'),
    z.string().max(500, 'metadata values are strings of at most 500 characters').nullable(),
  )
  .refine((m) => Object.keys(m).length <= METADATA_MAX_PAIRS, `metadata holds at most ${METADATA_MAX_PAIRS} key/value pairs`)
  .meta({
    description: `Up to ${METADATA_MAX_PAIRS} key/value pairs (keys up to 40 characters, values up to 500). On update keys are merged: a value of "" or null removes its key, and null for the whole object removes them all.`,
  });

export type MetadataInput = z.infer<typeof metadataSchema>;

/** Applies a metadata update to the stored pairs; returns an error message when the result is over the limit. */
export function mergeMetadata(current: Record<string, string>, update: MetadataInput | null | undefined): Record<string, string> {
  if (update === undefined) return current;
  if (update === null) return {};
  const next: Record<string, string> = { ...current };
  for (const [k, v] of Object.entries(update)) {
    if (v === null || v === '') delete next[k];
    else next[k] = v;
  }
  if (Object.keys(next).length > METADATA_MAX_PAIRS) {
    throw new ApiError('parameter_invalid', `metadata holds at most ${METADATA_MAX_PAIRS} key/value pairs`, 'metadata');
  }
  return next;
}

/** On create, null or "" values simply leave the key out. */
export function metadataOnCreate(input: MetadataInput | null | undefined): Record<string, string> {
  return mergeMetadata({}, input ?? null);
}

/** The answers of isHttpUrl by URL: a merchant sends the same few success and cancel URLs on every create. */
const httpUrls = new Map<string, boolean>();
const MAX_HTTP_URLS = 1_000;
/** Longer strings are answered without being kept (every URL the API takes is at most 2,048 characters). */
const MAX_KEPT_URL_LENGTH = 2048;

/**
 * Whether `v` is an absolute http or https URL with a host. Each URL is parsed once per process
 * (issue 28: `new URL` was 2 to 3 µs of every session create); at most MAX_HTTP_URLS answers (of
 * URLs up to MAX_KEPT_URL_LENGTH characters, at most 2 MB in all) are kept, the oldest dropped first.
 */
export function isHttpUrl(v: string): boolean {
  let ok = httpUrls.get(v);
  if (ok !== undefined) return ok;
  try {
    const u = new URL(v);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    ok = false;
  }
  if (v.length <= MAX_KEPT_URL_LENGTH) setBounded(httpUrls, MAX_HTTP_URLS, v, ok);
  return ok;
}

/** A string capped at `max` characters (500 unless said otherwise). */
export const text = (max = 500) => z.string().max(max, `must be at most ${max} characters`);

/**
 * An id from the URL path. One that cannot be an id of this kind cannot exist, so it is answered
 * as missing without a query.
 */
export function pathId(prefix: IdPrefix, resource: string, id: string): string {
  if (!isId(prefix, id)) throw resourceMissing(resource, id);
  return id;
}
