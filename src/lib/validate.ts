import { z } from 'zod';
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

/** Postgres text cannot hold U+0000: such a string is refused up front, naming where it was. */
function findNul(value: unknown, path: PropertyKey[] = []): PropertyKey[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return [...path, k];
      const found = findNul(v, [...path, k]);
      if (found) return found;
    }
  }
  return null;
}

/** Parses a request body or query with a zod schema; the first problem becomes a 400 naming its parameter. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, where: 'body' | 'query' = 'body'): z.output<S> {
  const nul = findNul(input);
  if (nul) throw new ApiError('parameter_invalid', 'Strings may not contain the NUL character (U+0000).', paramName(nul) || undefined);
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
  .refine((m) => Object.keys(m).length <= METADATA_MAX_PAIRS, `metadata holds at most ${METADATA_MAX_PAIRS} key/value pairs`);

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
