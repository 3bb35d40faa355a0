import { minorUnits } from '../lib/currency.ts';

/**
 * CSV as RFC 4180 writes it (comma, CRLF, a field quoted when it holds a quote, comma or line
 * break, quotes doubled), with formula injection neutralised: a cell a spreadsheet would run as a
 * formula (its first character `=`, `+`, `-`, `@`, a tab or a carriage return) is prefixed with `'`
 * (OWASP's advice), so "=HYPERLINK(…)" typed as a payer's name is shown, never run. Numbers the
 * export writes itself (amounts, counts) are never text typed by someone, and are written as they are:
 * a negative amount does not exist here.
 */
const FORMULA = /^[=+\-@\t\r]/;

export type Cell = string | number | boolean | null | undefined;

export function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = FORMULA.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (cells: readonly Cell[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/** An amount in the smallest unit as a plain decimal of its currency: 1999 usd "19.99", 1999 jpy "1999", 1999 kwd "1.999". */
export function decimalAmount(minor: number, currency: string): string {
  const digits = minorUnits(currency);
  if (digits === 0) return String(minor);
  const s = String(Math.abs(minor)).padStart(digits + 1, '0');
  return `${minor < 0 ? '-' : ''}${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

/** A time in UTC, ISO 8601 to the second: 2026-01-01T00:00:00Z. */
export const isoUtc = (d: Date | null | undefined): string => (d ? `${d.toISOString().slice(0, 19)}Z` : '');
