import type { Request } from 'express';
import { minorUnits } from '../lib/currency.ts';
import { ApiError } from '../lib/errors.ts';
import { MAX_UNIX_SECONDS } from '../lib/validate.ts';

/**
 * Reading the dashboard's forms into the very inputs the API takes: the result goes through the
 * API's own zod schema (`validate`) and service, so a form is checked exactly as a request is.
 * These functions only turn typed text into JSON values; a problem they find is an ApiError
 * naming the API parameter, as the API would.
 */

const OWN_FIELDS = new Set(['_csrf', 'form_mode', 'idempotency_key']);

/** The form's fields as strings (a repeated field keeps its first value), without the dashboard's own. */
export function fieldsOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
    if (OWN_FIELDS.has(k)) continue;
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') out[k] = first;
  }
  return out;
}

/**
 * A list page's query as the API reads it: a filter left empty in the filter bar ("Any", or a
 * cleared text field) is no filter, rather than a filter on the empty string; the dashboard's own
 * parameters (`done`, the notice after an action, and the page's `own`) are not the API's.
 */
export function listQueryOf(req: Request, own: readonly string[] = []): Record<string, unknown> {
  return Object.fromEntries(Object.entries(req.query).filter(([k, v]) => v !== '' && k !== 'done' && !own.includes(k)));
}

/** Every value of a repeated field (checkboxes of one name). */
export function listOf(req: Request, name: string): string[] {
  const v = ((req.body ?? {}) as Record<string, unknown>)[name];
  const all = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return all.filter((x): x is string => typeof x === 'string');
}

/** Typed text, trimmed; an empty field is left out (undefined). */
export const optional = (v: string | undefined): string | undefined => (v?.trim() ? v.trim() : undefined);

/** Typed text, trimmed; an empty field clears the value (null). */
export const orNull = (v: string | undefined): string | null => (v?.trim() ? v.trim() : null);

export const checked = (v: string | undefined): boolean => v === 'on';

/**
 * Metadata typed as one `key=value` per line (blank lines ignored). The keys and values are then
 * checked by the API's metadata schema.
 */
export function parseMetadata(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, line] of (text ?? '').split(/\r?\n/).entries()) {
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new ApiError('parameter_invalid', `Line ${i + 1} of metadata is not key=value.`, 'metadata');
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** The metadata as the form shows it. */
export const metadataText = (m: Record<string, string> | null | undefined): string =>
  Object.entries(m ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');

/** The API's metadata update that turns `current` into `next`: changed keys set, removed keys null. */
export function metadataPatch(current: Record<string, string>, next: Record<string, string>): Record<string, string | null> {
  const patch: Record<string, string | null> = {};
  for (const k of Object.keys(current)) if (!(k in next)) patch[k] = null;
  for (const [k, v] of Object.entries(next)) if (current[k] !== v) patch[k] = v;
  return patch;
}

/**
 * An amount typed in the currency's major unit ("12.50" usd, "1200" jpy) in its smallest unit
 * (1250, 1200). Digits, at most one decimal point and no more decimals than the currency has;
 * thousands separators are refused rather than guessed.
 */
export function parseAmount(text: string | undefined, currency: string, param = 'amount'): number {
  const t = (text ?? '').trim();
  const digits = minorUnits(currency);
  const m = /^(\d{1,12})(?:\.(\d*))?$/.exec(t);
  const frac = m?.[2] ?? '';
  if (!m || frac.length > digits) {
    const example = digits ? `12.${'5'.padEnd(digits, '0')}` : '1200';
    throw new ApiError('parameter_invalid', `Enter the amount in ${currency.toUpperCase()} with at most ${digits} decimal places, like ${example}.`, param);
  }
  return Number(m[1]) * 10 ** digits + Number(frac.padEnd(digits, '0') || '0');
}

/** An amount in the smallest unit as the form shows it ("12.50"). */
export function amountText(cents: number, currency: string): string {
  const digits = minorUnits(currency);
  if (!digits) return String(cents);
  const s = String(cents).padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

/** A `datetime-local` field, read as UTC (the dashboard shows every time in UTC), in Unix seconds. */
export function parseUtcDateTime(text: string | undefined, param: string): number | null {
  const t = (text ?? '').trim();
  if (!t) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(t);
  const ms = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0)) : NaN;
  const back = Number.isNaN(ms) ? '' : new Date(ms).toISOString().slice(0, 16);
  if (!m || back !== `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}` || ms / 1000 > MAX_UNIX_SECONDS) {
    throw new ApiError('parameter_invalid', 'Enter a date and time, like 2030-01-31T18:00 (UTC).', param);
  }
  return Math.floor(ms / 1000);
}

/** A time as a `datetime-local` field shows it (UTC). */
export const utcDateTimeText = (d: Date | null | undefined): string => (d ? d.toISOString().slice(0, 16) : '');
