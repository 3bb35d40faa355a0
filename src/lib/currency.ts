import { z } from 'zod';
import { setBounded } from './bounded.ts';

/**
 * Active ISO 4217 currency codes with their minor units (the exponent of the smallest unit).
 * Fund codes (BOV, CHE, CLF, …), precious metals and testing codes (XAU, XTS, XXX, …) are
 * left out: nobody pays a checkout in them.
 */
const MINOR_UNITS: Record<string, number> = {
  aed: 2, afn: 2, all: 2, amd: 2, ang: 2, aoa: 2, ars: 2, aud: 2, awg: 2, azn: 2, bam: 2, bbd: 2, bdt: 2,
  bgn: 2, bhd: 3, bif: 0, bmd: 2, bnd: 2, bob: 2, brl: 2, bsd: 2, btn: 2, bwp: 2, byn: 2, bzd: 2, cad: 2,
  cdf: 2, chf: 2, clp: 0, cny: 2, cop: 2, crc: 2, cup: 2, cve: 2, czk: 2, djf: 0, dkk: 2, dop: 2, dzd: 2,
  egp: 2, ern: 2, etb: 2, eur: 2, fjd: 2, fkp: 2, gbp: 2, gel: 2, ghs: 2, gip: 2, gmd: 2, gnf: 0, gtq: 2,
  gyd: 2, hkd: 2, hnl: 2, htg: 2, huf: 2, idr: 2, ils: 2, inr: 2, iqd: 3, irr: 2, isk: 0, jmd: 2, jod: 3,
  jpy: 0, kes: 2, kgs: 2, khr: 2, kmf: 0, kpw: 2, krw: 0, kwd: 3, kyd: 2, kzt: 2, lak: 2, lbp: 2, lkr: 2,
  lrd: 2, lsl: 2, lyd: 3, mad: 2, mdl: 2, mga: 2, mkd: 2, mmk: 2, mnt: 2, mop: 2, mru: 2, mur: 2, mvr: 2,
  mwk: 2, mxn: 2, myr: 2, mzn: 2, nad: 2, ngn: 2, nio: 2, nok: 2, npr: 2, nzd: 2, omr: 3, pab: 2, pen: 2,
  pgk: 2, php: 2, pkr: 2, pln: 2, pyg: 0, qar: 2, ron: 2, rsd: 2, rub: 2, rwf: 0, sar: 2, sbd: 2, scr: 2,
  sdg: 2, sek: 2, sgd: 2, shp: 2, sle: 2, sos: 2, srd: 2, ssp: 2, stn: 2, svc: 2, syp: 2, szl: 2, thb: 2,
  tjs: 2, tmt: 2, tnd: 3, top: 2, try: 2, ttd: 2, twd: 2, tzs: 2, uah: 2, ugx: 0, usd: 2, uyu: 2, uzs: 2,
  ved: 2, ves: 2, vnd: 0, vuv: 0, wst: 2, xaf: 0, xcd: 2, xcg: 2, xof: 0, xpf: 0, yer: 2, zar: 2, zmw: 2,
  zwg: 2,
};

export const isCurrency = (code: string): boolean => Object.hasOwn(MINOR_UNITS, code);

/** The `currency` request field of every API that takes an amount (checkout sessions, payment links). */
export const currencySchema = z
  .string()
  .refine(isCurrency, 'must be a lowercase ISO 4217 currency code, such as usd')
  .meta({ description: 'Three-letter ISO 4217 currency code, lowercase.', example: 'usd' });

/**
 * The largest amount one payment may charge, in the smallest currency unit (Stripe's bound):
 * a session's amount, its line items' total, a link's amount.
 */
export const MAX_AMOUNT = 99_999_999;

/** Digits after the decimal point: 2 for usd, 0 for jpy, 3 for kwd. */
export const minorUnits = (code: string): number => MINOR_UNITS[code] ?? 2;

// Building an Intl.NumberFormat costs more than rendering the rest of a page: one per currency and locale,
// with the amounts it formatted (issue 28: ICU's format was 11 µs of a link page, which shows its amount
// more than once; the same prices come back page after page). At most MAX_FORMATTED amounts each.
const formatters = new Map<string, { format: Intl.NumberFormat; done: Map<number, string> }>();
const MAX_FORMATTED = 1_000;

/** An amount in the smallest unit, formatted for people: 1999 usd is "$19.99", 1999 jpy is "¥1,999". */
export function formatAmount(amount: number, currency: string, locale = 'en-US'): string {
  const digits = minorUnits(currency);
  const key = `${locale}:${currency}`;
  let f = formatters.get(key);
  if (!f) {
    const format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    formatters.set(key, (f = { format, done: new Map() }));
  }
  let text = f.done.get(amount);
  if (text === undefined) {
    text = f.format.format(amount / 10 ** digits);
    setBounded(f.done, MAX_FORMATTED, amount, text);
  }
  return text;
}
