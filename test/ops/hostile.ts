import fc from 'fast-check';

/**
 * Hostile values for the no-5xx property test: what a careless or malicious client sends. Every
 * arbitrary here is plain data; test/ops/no-5xx.test.ts turns it into requests.
 */

/** Any UTF-16 code unit, lone surrogates and U+0000 included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(
    '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\ud83d', '\ude00\ud83d', '', ' ', '\t\n', '%00', '%ZZ', '%E0%A4%A',
    '../../etc/passwd', '<script>alert(1)</script>', "' or 1=1 --", '𝕏😀', '\u202e', 'null', 'undefined', 'NaN',
    '__proto__', 'constructor', 'toString', 'cus_', 'cs_00000000000000000000000000', 'pay_x', 'we_%00', 'evt_\u0000',
    '{CHECKOUT_SESSION_ID}', 'a@b.co', 'ÿ', '\uffff', '\ufeff', '*', '[]', '{}',
  ) },
  { weight: 2, arbitrary: fc.string({ unit: codeUnit, maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constantFrom(201, 255, 501, 1001, 2049, 5001, 100_000).map((n) => 'x'.repeat(n)) },
);

/** Numbers at the edges: of int4, of safe integers, of our bounds, of Date and Postgres time. */
export const NUMBER_EDGES = [
  0, -0, -1, 1, 1.5, -2.5, 0.1, 1e21, -1e21, 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53),
  99_999_999, 100_000_000, 1_000_000, 1_000_001, 1_000_000_000, 1_000_000_001, 253_402_300_799, 253_402_300_800,
  100_000_000_000_000, 8.64e15, Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON,
];

/** The same edges as query or form text, with the spellings only text can have. */
export const NUMBER_TEXT_EDGES = [
  ...NUMBER_EDGES.map(String), '1e3', '0x10', '%205', '', ' ', '9'.repeat(400), 'Infinity', 'NaN', '-0', '007', '1_000',
];

/** Strings Postgres cannot store, alone and inside the shapes a body nests them in. */
export const TEXT_EDGES: unknown[] = ['\u0000', 'a\u0000', '\ud800', 'a\udc00b', { k: '\ud800' }, { '\u0000': 'v' }, { '\udfff': 'v' }, [{ name: '\u0000', quantity: 1, amount: 1 }], [{ name: '\ud800', quantity: 1, amount: 1 }], ['\u0000']];

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NUMBER_EDGES) },
  // m × 10^e for e up to 17: around the int4 limit (2^31), the year 10000 (2.5e11 s) and Date's end (8.64e15 ms).
  { weight: 4, arbitrary: fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 17 }), fc.boolean()).map(([m, e, neg]) => (neg ? -1 : 1) * m * 10 ** e) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

/** Number literals JSON.stringify never writes but JSON.parse reads: exponents, overflow, long digits. */
export const numberLiteral = fc.constantFrom(
  '1e400', '-1e400', '1E+2', '2.5e1', '1e-400', '-0', '0.0', '1.0', '123456789012345678901234567890', '9'.repeat(400),
  '99999999.0', '1e8', '2.53402300800e11', '0.000000001',
);

const oddKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', '', ' ', '\u0000', '\ud800', 'a[b]', 'a.b', '0', 'id', 'object', 'livemode', 'amount_cents', 'x'.repeat(41));

/** JSON nested `depth` levels: objects and arrays in turn. */
export function nested(depth: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** The same as JSON text, built without recursion (JSON.stringify of 10,000 levels would overflow). */
export const nestedText = (depth: number) => '{"a":['.repeat(depth) + '1' + ']}'.repeat(depth);

export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  scalar: fc.oneof(
    { weight: 4, arbitrary: hostileString },
    { weight: 4, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  value: fc.oneof(
    { weight: 6, arbitrary: tie('scalar') },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4, depthIdentifier: 'json' }) },
    { weight: 1, arbitrary: fc.dictionary(fc.oneof(oddKey, hostileString), tie('value'), { maxKeys: 4, depthIdentifier: 'json' }) },
    { weight: 1, arbitrary: fc.constantFrom(31, 32, 33, 200).map((d) => nested(d)) },
    // Shaped like metadata, line items and event lists, with hostile insides.
    { weight: 2, arbitrary: fc.dictionary(fc.oneof(oddKey, hostileString), fc.oneof(hostileString, tie('scalar')), { minKeys: 1, maxKeys: 3 }) },
    { weight: 1, arbitrary: fc.array(fc.record({ name: tie('scalar'), quantity: tie('scalar'), amount: tie('scalar') }, { requiredKeys: [] }), { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.array(hostileString, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom(21, 101, 1001).map((n) => Array.from({ length: n }, (_, i) => ({ name: `i${i}`, quantity: 1, amount: 1 }))) },
  ),
})).value;

/**
 * A body: a valid one with some fields replaced, removed or added (so that it gets past the first
 * check and reaches the later ones), or a hostile JSON text on its own.
 */
export function hostileBody(base: Record<string, unknown>, fields: readonly string[]): fc.Arbitrary<string> {
  const own = Object.keys(base);
  const keys = fc.oneof(
    { weight: own.length ? 3 : 0, arbitrary: fc.constantFrom(...own, 'metadata') },
    { weight: 2, arbitrary: fc.constantFrom(...fields, 'metadata') },
    { weight: 1, arbitrary: oddKey },
  );
  // A field that holds a number gets numbers most of the time: that is where the bounds are.
  const valueFor = (k: string) => (typeof base[k] === 'number' ? fc.oneof({ weight: 3, arbitrary: hostileNumber }, hostileJson) : hostileJson);
  const edit = keys.chain((k) => fc.tuple(fc.constant(k), fc.option(valueFor(k), { freq: 8 })));
  const edits = fc.oneof({ weight: 4, arbitrary: edit.map((e) => [e]) }, { weight: 1, arbitrary: fc.array(edit, { minLength: 2, maxLength: 4 }) });
  const edited = edits.map((edits) => {
    const body: Record<string, unknown> = { ...base };
    for (const [k, v] of edits) {
      if (v === null) delete body[k];
      else Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return JSON.stringify(body);
  });
  // A numeric field written as a literal JSON.stringify would never produce.
  const literal = fc.tuple(fc.constantFrom(...fields, ...Object.keys(base)), numberLiteral).map(([k, lit]) => {
    const rest = { ...base };
    delete rest[k];
    const text = JSON.stringify(rest);
    return `{${JSON.stringify(k)}:${lit}${text === '{}' ? '}' : `,${text.slice(1)}`}`;
  });
  const whole = fc.oneof(
    fc.constantFrom('', 'null', '[]', '"x"', '{', '{"a":1,}', '1e400', 'true', '{"a":"\\ud800"}', '{"\\u0000":1}', '\u0000', '{"a":"\u0000"}', '\ufeff{}'),
    fc.constantFrom(32, 33, 10_000, 200_000).map(nestedText),
    hostileJson.map((v) => JSON.stringify(v) ?? 'null'),
  );
  return fc.oneof({ weight: 6, arbitrary: edited }, { weight: 2, arbitrary: literal }, { weight: 1, arbitrary: whole });
}

/** Percent-encodes like encodeURIComponent, but a lone surrogate (which that throws on) becomes its raw UTF-8-ish bytes. */
export function encode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...s].map((ch) => (ch.isWellFormed() ? encodeURIComponent(ch) : '%ED%A0%80')).join('');
  }
}

/** Encoded query or form values: numbers as text, percent garbage, hostile strings. */
export const hostileParamValue: fc.Arbitrary<string> = fc.oneof(
  // Long, but within Node's 16 KB of request head (beyond it Node answers 431 before the app sees it).
  { weight: 3, arbitrary: hostileString.map((v) => encode(v.slice(0, 2_000))) },
  { weight: 3, arbitrary: fc.constantFrom(
    '1e3', '-1', '1.5', '0', '100000000000000', '253402300800', '253402300799', '0x10', '%205', '', '9'.repeat(400), 'Infinity', 'NaN',
  ) },
  // Integers of 1 to 25 digits, either sign: past Date's and Postgres's range about half the time.
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('', '-'), fc.integer({ min: 1, max: 25 })).map(([sign, n]) => sign + '9'.repeat(n)) },
  { weight: 2, arbitrary: fc.constantFrom('%', '%Z', '%ZZ', '%E0%A4%A', '%00', '%ED%A0%80', '%C0%80', '%FF%FE', '%25%00', '+%2B+', '%0D%0A') },
);

/** Parameter names: the route's own, bracketed and repeated variants, and odd ones. */
export function paramName(own: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...own) },
    { weight: 1, arbitrary: fc.constantFrom(...own).map((k) => `${k}[]`) },
    { weight: 1, arbitrary: fc.constantFrom(...own).map((k) => `${k}[x][y]`) },
    { weight: 1, arbitrary: fc.constantFrom('created[gte]', 'created[lte]', 'created[gt]', 'created', 'created[gte][0]', '__proto__', 'constructor', '__proto__[x]', 'limit', 'a[', ']', '%00', '%ZZ', 'expand[]') },
  );
}

/** `base` as a query string (or urlencoded form). */
export const paramsText = (base: Record<string, string>) => Object.entries(base).map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');

/**
 * A query string (or form body) from a base. Mostly one change, so that the one hostile value is
 * not hidden behind another that is refused first: a parameter given a hostile value, left out,
 * or added (a repeat, a bracketed or odd name); sometimes several at once.
 */
export function hostileParams(base: Record<string, string>, own: readonly string[]): fc.Arbitrary<string> {
  const names = own.length ? own : ['limit'];
  const keys = Object.keys(base);
  const extra = fc.tuple(paramName(names), hostileParamValue).map(([k, v]) => `${k}=${v}`);
  const one: fc.Arbitrary<string>[] = [extra.map((e) => [paramsText(base), e].filter(Boolean).join('&'))];
  if (keys.length) {
    const replaced = fc.tuple(fc.constantFrom(...keys), hostileParamValue).map(([k, v]) => {
      const rest = paramsText(Object.fromEntries(Object.entries(base).filter(([key]) => key !== k)));
      return [rest, `${encode(k)}=${v}`].filter(Boolean).join('&');
    });
    one.push(replaced, replaced, fc.constantFrom(...keys).map((k) => paramsText(Object.fromEntries(Object.entries(base).filter(([key]) => key !== k)))));
  }
  const several = fc
    .tuple(fc.subarray(keys), fc.array(fc.tuple(fc.constantFrom(...names), hostileParamValue), { maxLength: 3 }), fc.array(extra, { maxLength: 3 }))
    .map(([kept, replaced, added]) => [paramsText(Object.fromEntries(kept.map((k) => [k, base[k]!]))), ...replaced.map(([k, v]) => `${encode(k)}=${v}`), ...added].filter(Boolean).join('&'));
  return fc.oneof({ weight: 4, arbitrary: fc.oneof(...one) }, { weight: 1, arbitrary: several });
}

/** A path segment in place of an id: a real id most of the time, else garbage. */
export function idSegment(ids: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...ids) },
    { weight: 2, arbitrary: hostileParamValue },
    { weight: 1, arbitrary: fc.constantFrom(...ids).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...ids).map((id) => `${id}%00`) },
    { weight: 1, arbitrary: fc.constantFrom(...ids).map((id) => `${id.slice(0, -1)}%ZZ`) },
  );
}
