import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/lib/errors.ts';
import { ID_PREFIXES, idFloor, idTime, isId, newId, type IdPrefix } from '../../src/lib/ids.ts';
import { listQuerySchema, parseListQuery } from '../../src/lib/pagination.ts';

// List cursors are ids (DESIGN 2): minted in time order, only compared, never looked up. Properties
// of making them and of reading them back from a query; the seed is fixed so that a failure replays.
const SEED = 24;
const PREFIXES = Object.values(ID_PREFIXES) as IdPrefix[];
const prefix = fc.constantFrom(...PREFIXES);
const ms = fc.integer({ min: 0, max: 2 ** 48 - 1 });
const query = (p: IdPrefix, q: Record<string, string>) => parseListQuery(listQuerySchema(p, {}), q);
const refusal = (p: IdPrefix, q: Record<string, string>): { code: string; param: string | undefined } | null => {
  try {
    query(p, q);
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, param: err.param };
  }
};

describe('cursor ids', () => {
  it('when a floor is made for any millisecond, then its time reads back, it is an id of its prefix, and floors sort as their times', () => {
    fc.assert(
      fc.property(prefix, ms, ms, (p, a, b) => {
        expect(idTime(idFloor(p, a))).toBe(a);
        expect(isId(p, idFloor(p, a))).toBe(true);
        const [x, y] = [idFloor(p, a), idFloor(p, b)];
        expect(x < y ? -1 : x > y ? 1 : 0).toBe(Math.sign(a - b));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('when ids are minted one after another, then each is an id of its prefix only, and they sort in the order they were made', () => {
    fc.assert(
      fc.property(prefix, fc.integer({ min: 2, max: 50 }), (p, n) => {
        const ids = Array.from({ length: n }, () => newId(p));
        expect([...ids].sort()).toEqual(ids);
        for (const id of ids) {
          expect(isId(p, id)).toBe(true);
          for (const other of PREFIXES) if (other !== p) expect(isId(other, id)).toBe(false);
        }
      }),
      { seed: SEED, numRuns: 50 },
    );
  });

  it('when a minted id is given as starting_after or ending_before, then the query reads it back unchanged (round trip)', () => {
    fc.assert(
      fc.property(prefix, fc.constantFrom('starting_after', 'ending_before'), fc.integer({ min: 1, max: 100 }), (p, side, limit) => {
        const id = newId(p);
        expect(query(p, { [side]: id, limit: String(limit) })).toMatchObject({ [side]: id, limit });
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('when a cursor is not an id of the listed prefix (garbage, another prefix, cut or lengthened), then 400 naming it', () => {
    const garbage = fc.oneof(
      fc.string(),
      fc.tuple(prefix, prefix).filter(([a, b]) => a !== b).map(([a, b]) => ({ p: a, v: newId(b) })),
      prefix.map((p) => ({ p, v: newId(p).slice(0, -1) })),
      prefix.map((p) => ({ p, v: `${newId(p)}0` })),
      prefix.map((p) => ({ p, v: newId(p).toUpperCase() })),
      prefix.map((p) => ({ p, v: newId(p).replace(/.$/, 'u') })), // u is not in the alphabet
    );
    fc.assert(
      fc.property(garbage, prefix, fc.constantFrom('starting_after', 'ending_before'), (g, fallback, side) => {
        const [p, v] = typeof g === 'string' ? [fallback, g] : [g.p, g.v];
        fc.pre(!isId(p, v));
        expect(refusal(p, { [side]: v })).toMatchObject({ param: side });
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('when both cursors are given, then 400 pagination_cursors_conflict naming ending_before', () => {
    const p: IdPrefix = 'cus';
    expect(refusal(p, { starting_after: newId(p), ending_before: newId(p) })).toEqual({ code: 'pagination_cursors_conflict', param: 'ending_before' });
  });
});
