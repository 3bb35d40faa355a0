import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  findBadText,
  findTooDeep,
  isHttpUrl,
  mergeMetadata,
  metadataOnCreate,
  metadataSchema,
  paramName,
  pathId,
  textProblem,
  unixSeconds,
  validate,
} from '../../src/lib/validate.ts';
import { newId } from '../../src/lib/ids.ts';

/** `depth` objects, each the only field `a` of the one before. */
const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe('validation helpers', () => {
  it('when a URL is checked, again or once too long to keep, then the answer is the same as the first', () => {
    const cases: Array<[string, boolean]> = [
      ['https://merchant.example/thanks?order=1', true],
      ['http://localhost:3000/done', true],
      ['ftp://merchant.example/x', false],
      ['javascript:alert(1)', false],
      ['/relative/path', false],
      ['https://', false],
      ['not a url', false],
      [`https://merchant.example/${'a'.repeat(5000)}`, true],
    ];
    for (let round = 0; round < 3; round++) for (const [url, ok] of cases) expect(isHttpUrl(url), url.slice(0, 40)).toBe(ok);
    // More URLs than are kept: the first ones are answered again, the same.
    for (let i = 0; i < 1_500; i++) expect(isHttpUrl(`https://m${i}.example/`)).toBe(true);
    for (const [url, ok] of cases) expect(isHttpUrl(url)).toBe(ok);
  });

  it('when a nested path is named, then it reads the way Stripe names parameters', () => {
    expect(paramName(['line_items', 0, 'amount'])).toBe('line_items[0][amount]');
    expect(paramName(['email'])).toBe('email');
    expect(paramName([])).toBe('');
  });

  it('when text holds NUL or an unpaired surrogate, then the problem is named, with its path in a body', () => {
    expect(textProblem('plain ✓ text')).toBeNull();
    expect(textProblem('a\u0000b')).toBe('nul');
    expect(textProblem('a\ud800b')).toBe('surrogate');
    expect(findBadText({ a: 'ok', metadata: { k: ['x', 'y\u0000'] } })).toEqual({ path: ['metadata', 'k', '1'], problem: 'nul' });
    expect(findBadText({ ['bad\ud800key']: 'v' })).toEqual({ path: ['bad\ud800key'], problem: 'surrogate' });
    expect(findBadText({ a: ['fine'], b: 1 })).toBeNull();
  });

  it('when a body nests deeper than the limit, then the path of the first node too deep is answered', () => {
    // The body itself is level 1: four nested objects fit a limit of 4, a fifth is too deep.
    expect(findTooDeep(nested(4), 4)).toBeNull();
    expect(findTooDeep(nested(5), 4)).toEqual(['a', 'a', 'a', 'a']);
    // Iterative: a depth that would overflow a recursive walk is answered too.
    expect(findTooDeep(nested(100_000), 32)).toHaveLength(32);
  });

  it('when a schema refuses the input, then validate throws the 400 naming the parameter: unknown first, then missing, then invalid', () => {
    const schema = z.strictObject({ amount: z.number().int(), currency: z.string() });
    expect(validate(schema, { amount: 5, currency: 'usd' })).toEqual({ amount: 5, currency: 'usd' });
    expect(() => validate(schema, { amount_cents: 5, currency: 'usd' })).toThrow(expect.objectContaining({ code: 'parameter_unknown', param: 'amount_cents' }));
    expect(() => validate(schema, { currency: 'usd' })).toThrow(expect.objectContaining({ code: 'parameter_missing', param: 'amount' }));
    expect(() => validate(schema, { amount: 1.5, currency: 'usd' })).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'amount' }));
    expect(() => validate(schema, { amount: 5, currency: 'u\u0000sd' })).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'currency' }));
  });

  it('when a Unix time is outside 0 … 9999-12-31T23:59:59Z or not an integer, then it is refused', () => {
    const s = unixSeconds();
    expect(s.safeParse(253_402_300_799).success).toBe(true);
    expect(s.safeParse(253_402_300_800).success).toBe(false);
    expect(s.safeParse(-1).success).toBe(false);
    expect(s.safeParse(1.5).success).toBe(false);
  });

  it('when metadata is updated, then "" and null remove keys, null clears all, and over 20 pairs is a 400 on metadata', () => {
    expect(mergeMetadata({ a: '1', b: '2' }, { a: '', b: null, c: '3' })).toEqual({ c: '3' });
    expect(mergeMetadata({ a: '1' }, undefined)).toEqual({ a: '1' });
    expect(mergeMetadata({ a: '1' }, null)).toEqual({});
    expect(metadataOnCreate({ a: '1', b: '', c: null })).toEqual({ a: '1' });
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']));
    expect(() => mergeMetadata(twenty, { extra: 'v' })).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'metadata' }));
    expect(metadataSchema.safeParse({ ['x'.repeat(41)]: 'v' }).success).toBe(false);
    expect(metadataSchema.safeParse({ 'a[b]': 'v' }).success).toBe(false);
    expect(metadataSchema.safeParse({ k: 'v'.repeat(501) }).success).toBe(false);
  });

  it('when a path id cannot be an id of its kind, then it is 404 resource_missing without a query', () => {
    const id = newId('cus');
    expect(pathId('cus', 'customer', id)).toBe(id);
    expect(() => pathId('cus', 'customer', 'cus_x')).toThrow(expect.objectContaining({ code: 'resource_missing' }));
    expect(() => pathId('cus', 'customer', newId('pl'))).toThrow(expect.objectContaining({ code: 'resource_missing' }));
  });
});
